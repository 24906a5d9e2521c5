// A power cut for one database file, loaded with LD_PRELOAD into a child
// writer by Tests/TroveTests/PowerLossTests.swift (which compiles it).
//
// The plan file named by TROVE_POWERCUT_PLAN gives, a line each, the database
// file, the journal and the operation to cut at; the test rewrites it each
// round, so the environment is set once (changing it while other threads of
// the test runner read it crashes them).
//
// Every write, sync and truncate on the planned file is passed through (the
// process keeps working on the real file) and appended to the journal, with
// whether it was durable
// when it returned (a descriptor opened with O_SYNC or O_DSYNC, as LMDB's
// meta-page writes are). At the planned operation the process dies with SIGKILL before doing it; a write that was cut is journaled
// as in flight. The test rebuilds the disk from the journal: synced data
// stays, anything else may be lost, torn or reordered.
//
// A file made elsewhere, synced and linked to the name (how Trove creates a
// database) arrives whole: its content is journaled as the new durable file.
//
// Journal records: u8 kind ('W' write, 'S' sync, 'T' truncate, 'B' a whole
// file linked to the name), then for 'W' u8 flags (1 durable on return, 2 in
// flight), u64 offset, u64 length and the bytes; for 'T' u64 size; for 'B'
// u64 length and the bytes. Integers are little-endian (the host's).
// A process that never opens the file (or runs without a plan) only has its
// calls forwarded.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

enum { max_fds = 4096, flag_durable = 1, flag_in_flight = 2 };

static int (*real_open)(const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_ftruncate)(int, off_t);
static off_t (*real_lseek)(int, off_t, int);
static int (*real_link)(const char *, const char *);

static char target[4096], journal_path[4096];
static int journal_fd = -1;
static long cut_at, operations;
static unsigned char tracked[max_fds]; // 0 no, 1 yes, 2 yes and every write is durable
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void resolve(void) {
    if (real_open) return;
    real_open = dlsym(RTLD_NEXT, "open");
    real_close = dlsym(RTLD_NEXT, "close");
    real_write = dlsym(RTLD_NEXT, "write");
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_writev = dlsym(RTLD_NEXT, "writev");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    real_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
    real_lseek = dlsym(RTLD_NEXT, "lseek");
    real_link = dlsym(RTLD_NEXT, "link");
}

__attribute__((constructor)) static void setup(void) {
    resolve();
    const char *plan = getenv("TROVE_POWERCUT_PLAN");
    if (!plan) return;
    int fd = real_open(plan, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    char text[2 * 4096 + 64];
    ssize_t length = read(fd, text, sizeof text - 1);
    real_close(fd);
    if (length <= 0) return;
    text[length] = 0;
    // Three lines: the database file, the journal, the operation to cut at.
    char *journal = strchr(text, '\n');
    if (!journal) return;
    *journal++ = 0;
    char *at = strchr(journal, '\n');
    if (!at) return;
    *at++ = 0;
    if (strlen(text) >= sizeof target || strlen(journal) >= sizeof journal_path) return;
    strcpy(journal_path, journal);
    cut_at = atol(at);
    strcpy(target, text);
}

// The journal opens when the process first touches the file: other processes
// started while the variables were set (a test runner spawns many) never do.
static int watching(void) {
    if (journal_fd < 0 && target[0]) {
        journal_fd = real_open(journal_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (journal_fd < 0) abort();
    }
    return journal_fd >= 0;
}

static void put(const void *bytes, size_t length) {
    const char *p = bytes;
    while (length > 0) {
        ssize_t n = real_write(journal_fd, p, length);
        if (n <= 0) abort();
        p += n;
        length -= (size_t)n;
    }
}

static int is_tracked(int fd) { return journal_fd >= 0 && fd >= 0 && fd < max_fds && tracked[fd]; }

// Counts one operation; at the cut, journals the write in flight (if any) and dies.
static void step(const struct iovec *iov, int count, uint64_t offset) {
    if (++operations != cut_at) return;
    if (iov) {
        uint64_t length = 0;
        for (int i = 0; i < count; i++) length += iov[i].iov_len;
        unsigned char head[2] = {'W', flag_in_flight};
        put(head, 2);
        put(&offset, 8);
        put(&length, 8);
        for (int i = 0; i < count; i++) put(iov[i].iov_base, iov[i].iov_len);
    }
    kill(getpid(), SIGKILL);
    for (;;) pause();
}

static void journal_write(int fd, const struct iovec *iov, int count, uint64_t offset, ssize_t written) {
    if (written <= 0) return;
    unsigned char head[2] = {'W', tracked[fd] == 2 ? flag_durable : 0};
    uint64_t length = (uint64_t)written;
    put(head, 2);
    put(&offset, 8);
    put(&length, 8);
    for (int i = 0; i < count && length > 0; i++) {
        size_t part = iov[i].iov_len < length ? iov[i].iov_len : (size_t)length;
        put(iov[i].iov_base, part);
        length -= part;
    }
}

static void track(int fd, int flags) {
    struct stat opened, wanted;
    if (fd < 0 || fd >= max_fds || !target[0]) return;
    tracked[fd] = 0;
    if (fstat(fd, &opened) != 0 || stat(target, &wanted) != 0) return;
    if (opened.st_dev != wanted.st_dev || opened.st_ino != wanted.st_ino || !watching()) return;
    tracked[fd] = (flags & (O_SYNC | O_DSYNC)) ? 2 : 1;
}

// The optional third argument of open.
#define READ_MODE(mode, flags)                                                                                 \
    mode_t mode = 0;                                                                                           \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                                                                     \
        va_list args;                                                                                          \
        va_start(args, flags);                                                                                 \
        mode = (mode_t)va_arg(args, int);                                                                      \
        va_end(args);                                                                                          \
    }

int open(const char *path, int flags, ...) {
    resolve();
    READ_MODE(mode, flags);
    int fd = real_open(path, flags, mode);
    if (target[0]) {
        pthread_mutex_lock(&lock);
        track(fd, flags);
        pthread_mutex_unlock(&lock);
    }
    return fd;
}

int open64(const char *path, int flags, ...) {
    READ_MODE(mode, flags);
    return open(path, flags, mode);
}

int close(int fd) {
    resolve();
    if (fd >= 0 && fd < max_fds) tracked[fd] = 0;
    return real_close(fd);
}

static ssize_t tracked_write(int fd, const struct iovec *iov, int count, off_t offset, int positioned) {
    pthread_mutex_lock(&lock);
    uint64_t at = positioned ? (uint64_t)offset : (uint64_t)real_lseek(fd, 0, SEEK_CUR);
    step(iov, count, at);
    ssize_t written;
    if (positioned)
        written = count == 1 ? real_pwrite(fd, iov[0].iov_base, iov[0].iov_len, offset) : -1;
    else
        written = real_writev(fd, iov, count);
    journal_write(fd, iov, count, at, written);
    pthread_mutex_unlock(&lock);
    return written;
}

ssize_t pwrite(int fd, const void *bytes, size_t length, off_t offset) {
    resolve();
    if (!is_tracked(fd)) return real_pwrite(fd, bytes, length, offset);
    struct iovec one = {(void *)bytes, length};
    return tracked_write(fd, &one, 1, offset, 1);
}

ssize_t pwrite64(int fd, const void *bytes, size_t length, off_t offset) { return pwrite(fd, bytes, length, offset); }

ssize_t write(int fd, const void *bytes, size_t length) {
    resolve();
    if (!is_tracked(fd)) return real_write(fd, bytes, length);
    struct iovec one = {(void *)bytes, length};
    return tracked_write(fd, &one, 1, 0, 0);
}

ssize_t writev(int fd, const struct iovec *iov, int count) {
    resolve();
    if (!is_tracked(fd)) return real_writev(fd, iov, count);
    return tracked_write(fd, iov, count, 0, 0);
}

static int tracked_sync(int fd, int (*sync)(int)) {
    pthread_mutex_lock(&lock);
    step(NULL, 0, 0);
    int result = sync(fd);
    if (result == 0) put("S", 1);
    pthread_mutex_unlock(&lock);
    return result;
}

int fsync(int fd) {
    resolve();
    return is_tracked(fd) ? tracked_sync(fd, real_fsync) : real_fsync(fd);
}

int fdatasync(int fd) {
    resolve();
    return is_tracked(fd) ? tracked_sync(fd, real_fdatasync) : real_fdatasync(fd);
}

int ftruncate(int fd, off_t size) {
    resolve();
    if (!is_tracked(fd)) return real_ftruncate(fd, size);
    pthread_mutex_lock(&lock);
    step(NULL, 0, 0);
    int result = real_ftruncate(fd, size);
    if (result == 0) {
        uint64_t value = (uint64_t)size;
        put("T", 1);
        put(&value, 8);
    }
    pthread_mutex_unlock(&lock);
    return result;
}

int ftruncate64(int fd, off_t size) { return ftruncate(fd, size); }

int link(const char *existing, const char *name) {
    resolve();
    if (!target[0] || strcmp(name, target) != 0) return real_link(existing, name);
    pthread_mutex_lock(&lock);
    watching();
    step(NULL, 0, 0);
    int result = real_link(existing, name);
    if (result == 0) {
        int fd = real_open(name, O_RDONLY | O_CLOEXEC);
        struct stat info;
        if (fd < 0 || fstat(fd, &info) != 0) abort();
        uint64_t length = (uint64_t)info.st_size;
        put("B", 1);
        put(&length, 8);
        char buffer[65536];
        ssize_t n;
        while ((n = read(fd, buffer, sizeof buffer)) > 0) put(buffer, (size_t)n);
        real_close(fd);
    }
    pthread_mutex_unlock(&lock);
    return result;
}
