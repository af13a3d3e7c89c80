// libcrypto's digest and cipher interfaces (EVP), the part StreamKit uses, and libssl's TLS client
// (RTMPS) with the X.509 names a certificate error reports.
#ifndef STREAMKIT_COPENSSL_SHIM_H
#define STREAMKIT_COPENSSL_SHIM_H

#include <openssl/evp.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#endif
