/* SPDX-License-Identifier: MIT */

/* Reading and writing the state file (daemon/state-file.c): a symlink, a FIFO, a directory, a
 * file others may write, an enormous file are refused with their named error (and nothing
 * hangs); a save is atomic: a reader racing a writer always finds the old or the new file, a
 * save that fails half way (the file size limit) leaves the old one and no debris; the
 * directory comes from $STATE_DIRECTORY, then $XDG_STATE_HOME, then $HOME. */

#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "state.h"
#include "tap.h"

static char dir[] = "/tmp/test-state-file-XXXXXX";

static State *state_with_rate(int64_t rate_ppb) {
        State *s = calloc(1, sizeof(*s));

        s->domains[0] = (StateDomain) { .name = "monotonic", .source = "posix", .unit = UNIT_NS,
                                        .rate_ppb = rate_ppb, .rate_uncertainty_ppb = 5 };
        /* A second domain makes the file long enough to be written in pieces. */
        s->domains[1] = (StateDomain) { .name = "boottime", .source = "posix", .unit = UNIT_NS,
                                        .rate_ppb = rate_ppb, .rate_uncertainty_ppb = 5 };
        s->n_domains = 2;
        return s;
}

static char *path_of(const char *name) {
        char *p;

        if (asprintf(&p, "%s/%s", dir, name) < 0)
                abort();
        return p;
}

/* Everything in dir but state.json: debris of a save. */
static int count_others(void) {
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;

        while (d && (e = readdir(d)))
                if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, STATE_FILE_NAME))
                        n++;
        if (d)
                closedir(d);
        return n;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(path);
}

static void expect_load(int want_r, const char *want_code, const char *what) {
        State *s = calloc(1, sizeof(*s));
        StateError error = {};
        int r = state_load(dir, s, &error);

        ok(r == want_r && error.code && strcmp(error.code, want_code) == 0, "%s: %s (%d, %s)", what, want_code, r,
           error.code ?: "-");
        free(s);
}

static void test_load_refusals(void) {
        char *path = path_of(STATE_FILE_NAME), *other = path_of("elsewhere.json");
        State *good = state_with_rate(42);
        char *text = NULL;
        FILE *f;

        expect_load(-ENOENT, "missing", "no file");

        /* A symlink to a valid file: refused all the same (it could point anywhere). */
        state_format(good, &text);
        f = fopen(other, "w");
        fputs(text, f);
        fclose(f);
        symlink(other, path);
        expect_load(-ELOOP, "symlink", "a symlink to a valid file");
        unlink(path);

        mkfifo(path, 0600);
        expect_load(-EPERM, "not-regular", "a FIFO (and the load did not hang on it)");
        unlink(path);

        mkdir(path, 0700);
        expect_load(-EPERM, "not-regular", "a directory");
        rmdir(path);

        rename(other, path);
        chmod(path, 0666);
        expect_load(-EPERM, "not-ours", "a file anyone may write");
        chmod(path, 0600);
        {
                State *s = calloc(1, sizeof(*s));

                ok(state_load(dir, s, NULL) == 0 && s->n_domains == 2 && s->domains[0].rate_ppb == 42,
                   "the same file, ours and 0600: loaded");
                free(s);
        }

        truncate(path, (off_t) strlen(text) / 2);
        expect_load(-EBADMSG, "syntax", "a file cut in half");
        truncate(path, STATE_FILE_SIZE_MAX + 1);
        expect_load(-EFBIG, "too-large", "a sparse file past the limit");
        truncate(path, (off_t) 1 << 40);
        expect_load(-EFBIG, "too-large", "a sparse file of a TiB");
        unlink(path);

        free(text);
        free(good);
        free(path);
        free(other);
}

static void test_save(void) {
        State *a = state_with_rate(111), *s = calloc(1, sizeof(*s));
        char *nested;
        struct stat st;

        ok(state_save(dir, a) == 0, "a state is saved");
        ok(state_load(dir, s, NULL) == 0 && s->domains[0].rate_ppb == 111, "and loads back");
        ok(stat(dir, &st) == 0 && count_others() == 0, "no temporary file is left behind");
        {
                char *path = path_of(STATE_FILE_NAME);

                ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "the file is 0600 (%o)", st.st_mode & 0777);
                free(path);
        }

        nested = path_of("a/b/timeconv");
        ok(state_save(nested, a) == 0 && stat(nested, &st) == 0 && (st.st_mode & 0777) == 0700,
           "a missing directory is made, 0700");
        free(nested);
        nested = path_of("a");
        nftw(nested, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        free(nested);
        free(a);
        free(s);
}

/* A save that fails half way: the file size limit stops the write after 64 bytes. */
static void test_failed_save(void) {
        State *a = state_with_rate(111), *b = state_with_rate(-222), *s = calloc(1, sizeof(*s));
        int status = 0;
        pid_t pid;

        state_save(dir, a);
        pid = fork();
        if (pid == 0) {
                struct rlimit limit = { 64, 64 };

                signal(SIGXFSZ, SIG_IGN);
                setrlimit(RLIMIT_FSIZE, &limit);
                _exit(state_save(dir, b) == -EFBIG ? 0 : 1);
        }
        waitpid(pid, &status, 0);
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "a save past the file size limit fails with -EFBIG");
        ok(state_load(dir, s, NULL) == 0 && s->domains[0].rate_ppb == 111, "the old file is intact");
        is_int(count_others(), 0, "and the half-written temporary file is gone");
        free(a);
        free(b);
        free(s);
}

/* A writer alternates two states as fast as it can; every read meanwhile finds one of them. */
static void test_atomic_race(void) {
        State *a = state_with_rate(111), *b = state_with_rate(-222), *s = calloc(1, sizeof(*s));
        int reads = 0, bad = 0, status = 0;
        pid_t pid;

        state_save(dir, a);
        pid = fork();
        if (pid == 0) {
                for (int i = 0; i < 300; i++)
                        if (state_save(dir, i % 2 ? a : b) < 0)
                                _exit(1);
                _exit(0);
        }
        while (waitpid(pid, &status, WNOHANG) == 0) {
                StateError error = {};

                reads++;
                if (state_load(dir, s, &error) < 0 || (s->domains[0].rate_ppb != 111 && s->domains[0].rate_ppb != -222)) {
                        if (bad++ == 0)
                                diag("read %d: %s: %s", reads, error.code ?: "?", error.text);
                }
        }
        ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "300 saves");
        is_int(bad, 0, "every one of the reads during them found the old file or the new one");
        diag("%d reads raced the writer", reads);
        free(a);
        free(b);
        free(s);
}

static void test_directory(void) {
        char *d = NULL;

        setenv("STATE_DIRECTORY", "/var/lib/x:/var/lib/y", 1);
        setenv("XDG_STATE_HOME", "/xdg", 1);
        setenv("HOME", "/home/u", 1);
        ok(state_directory(&d) == 0 && strcmp(d, "/var/lib/x") == 0, "$STATE_DIRECTORY first, its first entry");
        free(d);
        unsetenv("STATE_DIRECTORY");
        ok(state_directory(&d) == 0 && strcmp(d, "/xdg/timeconv") == 0, "then $XDG_STATE_HOME/timeconv");
        free(d);
        setenv("XDG_STATE_HOME", "relative", 1);
        ok(state_directory(&d) == 0 && strcmp(d, "/home/u/.local/state/timeconv") == 0,
           "a relative $XDG_STATE_HOME is ignored: $HOME/.local/state/timeconv");
        free(d);
        unsetenv("XDG_STATE_HOME");
        unsetenv("HOME");
        d = NULL;
        is_int(state_directory(&d), -ENOENT, "none of them: -ENOENT");
}

int main(void) {
        if (!mkdtemp(dir))
                return 1;
        test_load_refusals();
        test_save();
        test_failed_save();
        test_atomic_race();
        test_directory();
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
        return done_testing();
}
