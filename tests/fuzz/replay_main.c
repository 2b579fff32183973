/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Replays a fuzz harness over files, so `make check` runs every committed
 * seed and every crash regression through the same LLVMFuzzerTestOneInput
 * in any build (no clang or libFuzzer needed). Prints TAP, one line per file.
 * Arguments: files or directories; none = the harness's committed corpus
 * and regression directories (FUZZ_CORPUS_DIRS, colon-separated).
 * A crash or an oracle abort kills the run, which the TAP driver reports.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

typedef struct {
    char **paths;
    size_t n, cap;
} path_list;

static void add_path(path_list *l, const char *path)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        if ((l->paths = realloc(l->paths, l->cap * sizeof(*l->paths))) == NULL)
            abort();
    }
    if ((l->paths[l->n++] = strdup(path)) == NULL)
        abort();
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A file, or every regular file directly inside a directory (sorted). */
static void collect(path_list *l, const char *path)
{
    struct stat st;
    struct dirent *de;
    DIR *d;
    size_t first = l->n;

    if (stat(path, &st) != 0)
        return;                 /* an empty regression dir may not exist */
    if (!S_ISDIR(st.st_mode)) {
        add_path(l, path);
        return;
    }
    if ((d = opendir(path)) == NULL)
        return;
    while ((de = readdir(d)) != NULL) {
        char full[4096];

        if (de->d_name[0] == '.')
            continue;
        snprintf(full, sizeof(full), "%s/%s", path, de->d_name);
        if (stat(full, &st) == 0 && S_ISREG(st.st_mode))
            add_path(l, full);
    }
    closedir(d);
    qsort(l->paths + first, l->n - first, sizeof(*l->paths), cmp_str);
}

static unsigned char *read_all(const char *path, size_t *len)
{
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0, r;
    FILE *f = fopen(path, "rb");

    if (f == NULL)
        return NULL;
    do {
        if (n == cap && (buf = realloc(buf, cap = cap ? 2 * cap : 4096)) == NULL)
            abort();
        r = fread(buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose(f);
    *len = n;
    return buf;
}

int main(int argc, char **argv)
{
    path_list l = { NULL, 0, 0 };
    int i, failed = 0;
    size_t k;

    if (LLVMFuzzerInitialize != NULL)
        LLVMFuzzerInitialize(&argc, &argv);
    if (argc > 1) {
        for (i = 1; i < argc; i++)
            collect(&l, argv[i]);
    } else {
        char *dirs = strdup(FUZZ_CORPUS_DIRS), *save = NULL, *dir;

        for (dir = strtok_r(dirs, ":", &save); dir != NULL; dir = strtok_r(NULL, ":", &save))
            collect(&l, dir);
        free(dirs);
    }
    if (l.n == 0) {
        printf("1..0 # SKIP no corpus files found\n");
        return 0;
    }
    printf("1..%zu\n", l.n);
    fflush(stdout);
    for (k = 0; k < l.n; k++) {
        size_t len = 0;
        unsigned char *data = read_all(l.paths[k], &len);

        if (data == NULL) {
            printf("not ok %zu - %s (cannot read)\n", k + 1, l.paths[k]);
            failed = 1;
        } else {
            LLVMFuzzerTestOneInput(data, len);
            printf("ok %zu - %s\n", k + 1, l.paths[k]);
        }
        fflush(stdout);
        free(data);
        free(l.paths[k]);
    }
    free(l.paths);
    return failed;
}
