#include <string.h>
#include <openssl/aes.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sqlite3.h>

#define CRYPTO_KEY "0123456789abcdef"

void encrypt_with_macro_key(AES_KEY *aes)
{
    AES_set_encrypt_key((const unsigned char *)CRYPTO_KEY, 128, aes); // fire
}

void encrypt_with_copied_key(EVP_CIPHER_CTX *ctx, const unsigned char *iv)
{
    unsigned char key[32];
    memcpy(key, "fixed-key-fixed-key-fixed-key-12", 32);
    EVP_EncryptInit_ex(ctx, EVP_aes_256_cbc(), NULL, key, iv); // fire
}

void open_encrypted_db(sqlite3 *db)
{
    const char *k = "letmein";
    sqlite3_key(db, k, 7); // fire
}

void encrypt_with_loaded_key(AES_KEY *aes, const unsigned char *stored)
{
    AES_set_encrypt_key(stored, 128, aes); // no-fire
}

void mac_with_derived_key(const unsigned char *key, int n, const unsigned char *msg, int len)
{
    unsigned char out[32];
    unsigned int outlen;
    HMAC(EVP_sha256(), key, n, msg, len, out, &outlen); // no-fire
}
