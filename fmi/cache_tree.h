/*
 * cache_tree: a directory tree being built under one directory fd, with a
 * record of every node created, so that it can be sealed read-only or
 * removed completely without a recursive walk (whose depth a hostile
 * archive would choose).
 *
 * DESIGN: paths given here are normal-form entry names (archive_path): no
 * '.', '..', empty components or leading '/'. Each component is created and
 * opened relative to its parent's fd with O_NOFOLLOW, so even a symlink that
 * appeared in the tree could not be followed.
 */
#ifndef FMUD_FMI_CACHE_TREE_H
#define FMUD_FMI_CACHE_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct tree_node {
        char *path;             /* relative to the root */
        bool dir;
};

struct tree {
        int root_fd;            /* borrowed */
        struct tree_node *v;    /* in creation order: parents before children */
        size_t n, cap;
        char *parent;           /* the last parent directory opened, and its fd */
        int parent_fd;
};

void tree_init(struct tree *t, int root_fd);
/* Closes the cached parent and frees the record; the files stay. */
void tree_fini(struct tree *t);

/*
 * Create the file 'path' (parents as needed, mode 0700) with O_CREAT |
 * O_EXCL | O_NOFOLLOW, mode 0600. Returns a writable fd (caller closes) or
 * -errno.
 */
int tree_create_file(struct tree *t, const char *path);

/* Create the directory 'path' (and its parents). Existing directories are fine. */
int tree_create_dir(struct tree *t, const char *path);

/* fchmod every directory, the root included, to mode and fsync it. Returns 0 or -errno. */
int tree_seal(struct tree *t, mode_t mode);

/*
 * Remove everything recorded, children first, after making directories
 * writable again. Best effort: returns the first error, carries on past it.
 */
int tree_remove(struct tree *t);

#endif
