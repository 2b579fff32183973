/* SPDX-License-Identifier: Apache-2.0 */
/*
 * heapcount.so: an LD_PRELOAD library for tests/tls that counts the bytes a server
 * process holds on the malloc heap, so that a leak check measures what the process
 * allocated and did not free rather than its resident size (which moves with the
 * allocator's arenas and fragmentation, and with the load on the machine).
 *
 * Every malloc, calloc, realloc, memalign-family call and free goes on to the
 * allocator the process would have used without this library (the next definition
 * after it: glibc's, or one the server links, such as Debian 13's HAProxy and its
 * jemalloc; blocks of one allocator must never reach another's free) and adds or
 * subtracts that allocator's malloc_usable_size() of the block. With HEAPCOUNT_DIR set,
 * each process keeps its count in HEAPCOUNT_DIR/heap.<pid> (one 64-bit integer in host
 * byte order, through a shared mapping of that file, so that a reader sees it at any
 * moment without signalling the process); a forked child moves to its own file,
 * carrying the parent's count (it holds a copy of the parent's heap).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The next allocator's functions, found by dlsym(RTLD_NEXT) in the constructor (or at
 * the first allocation, if a constructor that runs earlier allocates). dlsym itself may
 * allocate: while it runs, allocations come from a small static buffer that is never
 * freed. */
static void *(*next_malloc)(size_t);
static void *(*next_calloc)(size_t, size_t);
static void *(*next_realloc)(void *, size_t);
static void *(*next_memalign)(size_t, size_t);
static void (*next_free)(void *);
static size_t (*next_usable)(void *);
static _Alignas(16) unsigned char boot[8192];
static size_t boot_used;
static int resolving;

static void *boot_alloc(size_t n)
{
    void *p;

    n = (n + 15) & ~(size_t)15;
    if (n > sizeof(boot) - boot_used)
        return NULL;
    p = boot + boot_used;
    boot_used += n;
    return p;
}

static int in_boot(const void *p)
{
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + sizeof(boot);
}

static int resolve(void)
{
    if (next_free != NULL)
        return 1;
    if (resolving)
        return 0;
    resolving = 1;
    next_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
    next_calloc = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "calloc");
    next_realloc = (void *(*)(void *, size_t))dlsym(RTLD_NEXT, "realloc");
    next_memalign = (void *(*)(size_t, size_t))dlsym(RTLD_NEXT, "memalign");
    next_usable = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
    next_free = (void (*)(void *))dlsym(RTLD_NEXT, "free");
    resolving = 0;
    if (next_malloc == NULL || next_calloc == NULL || next_realloc == NULL
        || next_memalign == NULL || next_usable == NULL || next_free == NULL)
        abort();                                /* no allocator to count: stop loudly */
    return 1;
}

/* The count lives in a private page until the process has its file; the file mapping
 * replaces the page at the same address, so the hot paths never test where it is. */
static _Atomic int64_t *live;
static char dir[512];

static void count(void *p, int sign)
{
    if (p != NULL && live != NULL)
        atomic_fetch_add_explicit(live, sign * (int64_t)next_usable(p), memory_order_relaxed);
}

/* Async-signal-safe decimal formatting: also used in the fork child handler. */
static size_t put_dec(char *out, unsigned long v)
{
    char tmp[24];
    size_t n = 0, i;

    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v != 0);
    for (i = 0; i < n; i++)
        out[i] = tmp[n - 1 - i];
    return n;
}

/* Map HEAPCOUNT_DIR/heap.<pid> over the counter's page, keeping its value. */
static void attach_file(void)
{
    char path[sizeof(dir) + 32];
    size_t n = strlen(dir);
    int64_t value;
    void *m;
    int fd;

    if (dir[0] == '\0' || live == NULL)
        return;
    memcpy(path, dir, n);
    memcpy(path + n, "/heap.", 6);
    n += 6;
    n += put_dec(path + n, (unsigned long)getpid());
    path[n] = '\0';
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    value = atomic_load(live);
    if (write(fd, &value, sizeof(value)) == (ssize_t)sizeof(value)
        && ftruncate(fd, (off_t)sysconf(_SC_PAGESIZE)) == 0) {
        m = mmap((void *)live, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                 MAP_SHARED | MAP_FIXED, fd, 0);
        /* MAP_FIXED either replaced the page or left it as it was: the count goes on
         * either way, in the file or privately. */
        (void)m;
        /* Allocations between the load above and the mapping were counted in the
         * page the mapping replaced; none happen in this single-threaded window except
         * in a parent's other threads, which the parent's file does not need. */
        atomic_store(live, value);
    }
    close(fd);
}

__attribute__((constructor)) static void heapcount_init(void)
{
    const char *d = getenv("HEAPCOUNT_DIR");
    void *page = mmap(NULL, (size_t)sysconf(_SC_PAGESIZE), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

    (void)resolve();
    if (page == MAP_FAILED)
        return;
    live = page;
    if (d != NULL && strlen(d) < sizeof(dir))
        strcpy(dir, d);
    attach_file();
    /* A shared mapping is shared with a forked child: the child must move to its own
     * file before it allocates, or it would count into its parent's. */
    pthread_atfork(NULL, NULL, attach_file);
}

void *malloc(size_t n)
{
    void *p;

    if (!resolve())
        return boot_alloc(n);
    p = next_malloc(n);
    count(p, 1);
    return p;
}

void *calloc(size_t k, size_t n)
{
    void *p;

    if (!resolve())
        return n != 0 && k > SIZE_MAX / n ? NULL : boot_alloc(k * n);   /* zeroed: static */
    p = next_calloc(k, n);
    count(p, 1);
    return p;
}

void *realloc(void *old, size_t n)
{
    int64_t before;
    void *p;

    if (in_boot(old)) {                         /* a boot block moves to the real heap */
        p = malloc(n);
        if (p != NULL)
            memcpy(p, old, n < sizeof(boot) - (size_t)((unsigned char *)old - boot)
                               ? n : sizeof(boot) - (size_t)((unsigned char *)old - boot));
        return p;
    }
    if (!resolve())
        return boot_alloc(n);
    before = old != NULL ? (int64_t)next_usable(old) : 0;
    p = next_realloc(old, n);
    if (p != NULL || n == 0) {
        /* realloc(old, 0) frees old and may return NULL */
        if (live != NULL)
            atomic_fetch_sub_explicit(live, before, memory_order_relaxed);
        count(p, 1);
    }
    return p;
}

void free(void *p)
{
    if (p == NULL || in_boot(p) || !resolve())
        return;
    count(p, -1);
    next_free(p);
}

void *memalign(size_t align, size_t n)
{
    void *p;

    if (!resolve())
        return NULL;
    p = next_memalign(align, n);
    count(p, 1);
    return p;
}

void *aligned_alloc(size_t align, size_t n)
{
    return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p;

    if (align < sizeof(void *) || (align & (align - 1)) != 0)
        return 22; /* EINVAL */
    p = memalign(align, n);
    if (p == NULL)
        return 12; /* ENOMEM */
    *out = p;
    return 0;
}

void *valloc(size_t n)
{
    return memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

void *pvalloc(size_t n)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);

    return memalign(page, (n + page - 1) & ~(page - 1));
}
