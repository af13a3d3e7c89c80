// Linux kernel interfaces that Swift's Glibc module map leaves out: epoll, eventfd, accept4,
// openat2, splice, pipe2 and extended attributes. No library is linked; these are declarations of libc functions and one typed wrapper
// around the variadic syscall(2), which Swift cannot call.
#ifndef STREAMKIT_CLINUXSYSTEM_SHIM_H
#define STREAMKIT_CLINUXSYSTEM_SHIM_H

#include <errno.h>
#include <linux/openat2.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

// Declared by <sys/socket.h> only under _GNU_SOURCE, which the Glibc module is built without.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

// Likewise <fcntl.h> and <unistd.h>: splice(2) and pipe2(2), with the flags and fcntl commands
// they take (values from the kernel's uapi headers).
extern ssize_t splice(int in, __off64_t *inOffset, int out, __off64_t *outOffset, size_t length, unsigned int flags);
extern int pipe2(int descriptors[2], int flags);
static const unsigned int SK_SPLICE_F_MOVE = 1;
static const unsigned int SK_SPLICE_F_NONBLOCK = 2;
static const unsigned int SK_SPLICE_F_MORE = 4;
static const int SK_F_SETPIPE_SZ = 1031;
static const int SK_F_GETPIPE_SZ = 1032;

// openat2(2) with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS: opens `path` relative to `directory`
// only if resolving it, symbolic links included, never leaves `directory` (the kernel refuses
// with EXDEV). Returns -1 with errno set; ENOSYS before Linux 5.6.
static inline int sk_open_beneath(int directory, const char *path, int flags) {
#ifdef SYS_openat2
    struct open_how how = {0};
    how.flags = (unsigned long long)flags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    return (int)syscall(SYS_openat2, directory, path, &how, sizeof(how));
#else
    errno = ENOSYS;
    return -1;
#endif
}

#endif
