/*
 * control_log: the daemon program's log lines on stderr, one write each,
 * with the "<N>" syslog level prefix journald understands (sd-daemon.h)
 * and no timestamp (journald adds one).
 *
 * Threads: any thread may log; the level is read relaxed and changed
 * only by the main thread (SIGHUP).
 */
#ifndef FMUD_DAEMON_CONTROL_LOG_H
#define FMUD_DAEMON_CONTROL_LOG_H

#define LOG_LVL_ERR     3
#define LOG_LVL_WARNING 4
#define LOG_LVL_NOTICE  5
#define LOG_LVL_INFO    6
#define LOG_LVL_DEBUG   7

void log_set_level(int level);
int log_get_level(void);
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_err(...)    log_msg(LOG_LVL_ERR, __VA_ARGS__)
#define log_warn(...)   log_msg(LOG_LVL_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_LVL_NOTICE, __VA_ARGS__)
#define log_info(...)   log_msg(LOG_LVL_INFO, __VA_ARGS__)
#define log_debug(...)  log_msg(LOG_LVL_DEBUG, __VA_ARGS__)

#endif
