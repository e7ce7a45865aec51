/* Test helper: a model description read from an unpacked FMU's folder. */
#ifndef FMUD_TESTS_MD_LOAD_H
#define FMUD_TESTS_MD_LOAD_H

#include "fmi/model_description.h"

/* Parse dir/modelDescription.xml; NULL when it cannot be read or parsed. Free with md_free(). */
struct md *md_load_dir(const char *dir);

#endif
