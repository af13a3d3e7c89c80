// libcrypto's digest and cipher interfaces (EVP), the part StreamKit uses.
#ifndef STREAMKIT_COPENSSL_SHIM_H
#define STREAMKIT_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/rand.h>

#endif
