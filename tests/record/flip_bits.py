# flip_bits.py FILE DIR N: DIR/flip1.hvrec .. flipN.hvrec, each FILE with
# one random bit changed (seeded: the same bits every run).
import random
import sys

data = open(sys.argv[1], "rb").read()
rnd = random.Random(11)
for i in range(1, int(sys.argv[3]) + 1):
    flipped = bytearray(data)
    bit = rnd.randrange(len(flipped) * 8)
    flipped[bit // 8] ^= 1 << (bit % 8)
    with open("%s/flip%d.hvrec" % (sys.argv[2], i), "wb") as f:
        f.write(flipped)
