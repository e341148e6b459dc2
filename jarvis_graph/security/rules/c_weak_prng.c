#include <stdlib.h>
#include <string.h>
#include <openssl/aes.h>
#include <openssl/rand.h>

int make_session(void)
{
    int session_id = rand(); // fire
    return session_id;
}

void make_nonce(unsigned *out)
{
    unsigned nonce;
    nonce = random() % 1000; // fire
    *out = nonce;
}

int roll_dice(void)
{
    int dice = rand() % 6; // no-fire
    return dice;
}

int make_key_from_device(void)
{
    int key = read_urandom(); // no-fire
    return key;
}

void make_token(char *token, int n)
{
    int i;
    for (i = 0; i < n - 1; i++) {
        token[i] = 'a' + rand() % 26; // fire
    }
    token[n - 1] = '\0';
}

struct conn {
    unsigned cookie;
    unsigned retries;
};

void open_conn(struct conn *c)
{
    unsigned r = (unsigned)rand();
    c->retries = r % 3; // no-fire
    c->cookie = r; // fire
}

void shuffle(int *deck, int n)
{
    int i;
    for (i = n - 1; i > 0; i--) {
        int j = rand() % (i + 1); // no-fire
        int t = deck[i];
        deck[i] = deck[j];
        deck[j] = t;
    }
}

void seed_openssl(void)
{
    long seed = random();
    RAND_seed(&seed, sizeof seed); // fire
}

void key_from_rand(AES_KEY *aes)
{
    unsigned char bits[16];
    int r = rand();
    memcpy(bits, &r, sizeof r);
    AES_set_encrypt_key((const unsigned char *)&r, 128, aes); // fire
}

void key_from_file(AES_KEY *aes, const unsigned char *stored)
{
    int delay = rand() % 100;
    AES_set_encrypt_key(stored, 128, aes); // no-fire
    usleep(delay);
}

void pick_greeting(char *out)
{
    const char *keys[] = {"hello", "hi", "hey"};
    int pick = rand() % 3; // no-fire
    strcpy(out, keys[pick]); // no-fire
}
