// The system's compression libraries, for the transport's own decoding of bodies: zlib, linked,
// for `gzip` and `deflate`; brotli and zstd, opened at run time (`CodingLibraries.swift`), for `br`
// and `zstd`, so that building the transport needs no headers of theirs.
#ifndef C_STRATA_COMPRESSION_H
#define C_STRATA_COMPRESSION_H

#include <stddef.h>
#include <zlib.h>

// `inflateInit2` is a macro, which Swift does not import.
static inline int CStrataZlib_inflateInit2(z_streamp stream, int windowBits) {
    return inflateInit2(stream, windowBits);
}

// For the tests, which compress what they decode.
static inline int CStrataZlib_deflateInit2(z_streamp stream, int level, int windowBits) {
    return deflateInit2(stream, level, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY);
}

// zstd's stream buffers, laid out as `ZSTD_inBuffer` and `ZSTD_outBuffer` in zstd.h (stable API).
typedef struct {
    const void *src;
    size_t size;
    size_t pos;
} CStrataZstdInput;

typedef struct {
    void *dst;
    size_t size;
    size_t pos;
} CStrataZstdOutput;

#endif
