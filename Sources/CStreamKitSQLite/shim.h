// sqlite3, plus the destructor constants that are macros casting integers to function pointers.
#ifndef STREAMKIT_CSQLITE_SHIM_H
#define STREAMKIT_CSQLITE_SHIM_H

#include <sqlite3.h>

static inline sqlite3_destructor_type sk_sqlite_transient(void) { return SQLITE_TRANSIENT; }
static inline sqlite3_destructor_type sk_sqlite_static(void) { return SQLITE_STATIC; }

#endif
