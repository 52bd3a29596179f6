// The system's zlib, for the transport's own decoding of `gzip` and `deflate` bodies.
#ifndef C_STRATA_ZLIB_H
#define C_STRATA_ZLIB_H

#include <zlib.h>

// `inflateInit2` is a macro, which Swift does not import.
static inline int CStrataZlib_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

// For the tests, which compress what they decode.
static inline int CStrataZlib_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

#endif
