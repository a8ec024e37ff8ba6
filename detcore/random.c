/*
 * random.c - seeded random streams: ChaCha20 (RFC 8439 block function)
 * keyed from the seed and the stream number, so the guest's randomness,
 * the scheduler's and hvrun's own ids never draw from one another.
 * With --no-virtualize-random the guest stream reads host entropy.
 */
#include "det.h"

#include <string.h>
#include <sys/random.h>

static uint32_t rotl32(uint32_t v, int c) { return (v << c) | (v >> (32 - c)); }

#define QR(a, b, c, d)                                                         \
    do {                                                                       \
        a += b; d ^= a; d = rotl32(d, 16);                                     \
        c += d; b ^= c; b = rotl32(b, 12);                                     \
        a += b; d ^= a; d = rotl32(d, 8);                                      \
        c += d; b ^= c; b = rotl32(b, 7);                                      \
    } while (0)

static void chacha20_block(const uint32_t key[8], uint64_t counter,
                           uint8_t out[64])
{
    uint32_t s[16] = {0x61707865, 0x3320646e, 0x79622d32, 0x6b206574};
    memcpy(&s[4], key, 32);
    s[12] = (uint32_t)counter;
    s[13] = (uint32_t)(counter >> 32);
    s[14] = s[15] = 0;
    uint32_t x[16];
    memcpy(x, s, sizeof(x));
    for (int i = 0; i < 10; i++) {
        QR(x[0], x[4], x[8], x[12]); QR(x[1], x[5], x[9], x[13]);
        QR(x[2], x[6], x[10], x[14]); QR(x[3], x[7], x[11], x[15]);
        QR(x[0], x[5], x[10], x[15]); QR(x[1], x[6], x[11], x[12]);
        QR(x[2], x[7], x[8], x[13]); QR(x[3], x[4], x[9], x[14]);
    }
    for (int i = 0; i < 16; i++) {
        uint32_t v = x[i] + s[i];
        memcpy(out + 4 * i, &v, 4);
    }
}

/* splitmix64: expands (seed, stream) into a 256-bit key. */
static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void det_rng_init(struct det_state *d);
void det_rng_init(struct det_state *d)
{
    for (int s = 0; s < DET_NR_STREAMS; s++) {
        uint64_t seed = s == DET_STREAM_SCHED && d->cfg.chaos_seed_set
                            ? d->cfg.chaos_seed
                            : d->cfg.seed;
        uint64_t x = seed ^ (0x68767275ULL << 32) ^ (uint64_t)s * 0x1000193;
        struct det_rng *r = &d->rng[s];
        for (int i = 0; i < 4; i++) {
            uint64_t k = splitmix64(&x);
            r->key[2 * i] = (uint32_t)k;
            r->key[2 * i + 1] = (uint32_t)(k >> 32);
        }
        r->counter = 0;
        r->used = 64;
    }
}

static void rng_fill(struct det_rng *r, uint8_t *p, size_t len)
{
    while (len > 0) {
        if (r->used == 64) {
            chacha20_block(r->key, r->counter++, r->block);
            r->used = 0;
        }
        size_t n = 64 - r->used < len ? 64 - r->used : len;
        memcpy(p, r->block + r->used, n);
        r->used += (unsigned)n;
        p += n;
        len -= n;
    }
}

void det_stream_fill(struct det_state *d, enum det_stream s, void *buf,
                     size_t len)
{
    rng_fill(&d->rng[s], buf, len);
}

static void host_entropy(void *buf, size_t len)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n <= 0)
            continue;
        p += n;
        len -= (size_t)n;
    }
}

void det_random_fill(struct det_state *d, void *buf, size_t len)
{
    if (d->cfg.virtualize_random) {
        d->reads[DET_SRC_RANDOM]++;
        rng_fill(&d->rng[DET_STREAM_GUEST], buf, len);
    } else if (!det_tap_get(d, DET_SRC_RANDOM, buf, len)) {
        host_entropy(buf, len);
        det_tap_put(d, DET_SRC_RANDOM, buf, len);
    }
    det_log_value(d, DET_SRC_RANDOM, buf, len);
}

void det_uuid(struct det_state *d, char out[37])
{
    uint8_t b[16];
    if (d->boot_id[0])
        det_random_fill(d, b, sizeof(b)); /* a guest read */
    else
        det_stream_fill(d, DET_STREAM_MISC, b, sizeof(b)); /* boot id */
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, 37,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
             b[10], b[11], b[12], b[13], b[14], b[15]);
}
