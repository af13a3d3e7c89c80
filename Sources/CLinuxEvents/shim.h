// Linux kernel interfaces that Swift's Glibc module map leaves out: epoll, eventfd, accept4.
// No library is linked; these are declarations of libc functions the server's event loop calls.
#ifndef STREAMKIT_CLINUXEVENTS_SHIM_H
#define STREAMKIT_CLINUXEVENTS_SHIM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

// Declared by <sys/socket.h> only under _GNU_SOURCE, which the Glibc module is built without.
extern int accept4(int fd, struct sockaddr *address, socklen_t *length, int flags);

#endif
