// OpenSSL's libcrypto, for encryption at rest on Linux (Apple platforms use CryptoKit).
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/hmac.h>
#include <openssl/crypto.h>
