import CStrataCompression

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A C library of the system, opened at run time, and its functions looked up by name.
///
/// The decoders of `br` and `zstd` bodies come this way rather than linked, so that building the
/// transport needs neither library's headers; they are there at run time wherever libcurl decodes
/// those codings (`URLSession` on Linux links both), and where they are not, the transport neither
/// asks for those codings nor decodes them.
struct SystemLibrary: @unchecked Sendable {  // Sendable: a handle that is never closed.
    private let handle: UnsafeMutableRawPointer

    /// The first of `names` the dynamic loader finds, or `nil`.
    init?(_ names: [String]) {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else { return nil }
        self.handle = handle
    }

    /// The function named `name`, as `type` (a `@convention(c)` function type), or `nil`.
    func function<Function>(_ name: String, as type: Function.Type) -> Function? {
        dlsym(handle, name).map { unsafeBitCast($0, to: type) }
    }
}

/// Brotli's decoder (RFC 7932; `libbrotlidec`, decode.h), or `nil` where the system has none.
struct BrotliDecoderLibrary: Sendable {
    typealias Create = @convention(c) (UnsafeRawPointer?, UnsafeRawPointer?, UnsafeMutableRawPointer?) -> OpaquePointer?
    typealias Decompress =
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<Int>, UnsafeMutablePointer<UnsafePointer<UInt8>?>,
            UnsafeMutablePointer<Int>, UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, UnsafeMutablePointer<Int>?
        ) -> Int32
    typealias Destroy = @convention(c) (OpaquePointer?) -> Void
    typealias ErrorCode = @convention(c) (OpaquePointer?) -> Int32
    typealias ErrorString = @convention(c) (Int32) -> UnsafePointer<CChar>?

    /// `BrotliDecoderCreateInstance(alloc, free, opaque)`.
    let create: Create
    /// `BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, &total)`.
    let decompress: Decompress
    /// `BrotliDecoderDestroyInstance(state)`.
    let destroy: Destroy
    /// `BrotliDecoderGetErrorCode(state)`.
    let errorCode: ErrorCode
    /// `BrotliDecoderErrorString(code)`.
    let errorString: ErrorString

    /// `BrotliDecoderResult`'s values.
    static let failed: Int32 = 0
    static let succeeded: Int32 = 1
    static let needsInput: Int32 = 2
    static let needsOutput: Int32 = 3

    static let shared: Self? = {
        guard let library = SystemLibrary(["libbrotlidec.so.1", "libbrotlidec.so", "libbrotlidec.1.dylib"]),
            let create = library.function("BrotliDecoderCreateInstance", as: Create.self),
            let decompress = library.function("BrotliDecoderDecompressStream", as: Decompress.self),
            let destroy = library.function("BrotliDecoderDestroyInstance", as: Destroy.self),
            let errorCode = library.function("BrotliDecoderGetErrorCode", as: ErrorCode.self),
            let errorString = library.function("BrotliDecoderErrorString", as: ErrorString.self)
        else { return nil }
        return Self(
            create: create, decompress: decompress, destroy: destroy, errorCode: errorCode, errorString: errorString)
    }()
}

/// zstd's decoder (RFC 8878; `libzstd`, zstd.h's stable API), or `nil` where the system has none.
struct ZstdDecoderLibrary: Sendable {
    typealias Create = @convention(c) () -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Int
    typealias SetParameter = @convention(c) (OpaquePointer?, Int32, Int32) -> Int
    typealias Decompress =
        @convention(c) (
            OpaquePointer?, UnsafeMutablePointer<CStrataZstdOutput>, UnsafeMutablePointer<CStrataZstdInput>
        ) -> Int
    typealias IsError = @convention(c) (Int) -> UInt32
    typealias ErrorName = @convention(c) (Int) -> UnsafePointer<CChar>?

    /// `ZSTD_createDCtx()`.
    let create: Create
    /// `ZSTD_freeDCtx(context)`.
    let free: Free
    /// `ZSTD_DCtx_setParameter(context, parameter, value)`.
    let setParameter: SetParameter
    /// `ZSTD_decompressStream(context, &output, &input)`.
    let decompress: Decompress
    /// `ZSTD_isError(result)`.
    let isError: IsError
    /// `ZSTD_getErrorName(result)`.
    let errorName: ErrorName

    /// `ZSTD_d_windowLogMax`.
    static let windowLogMax: Int32 = 100

    static let shared: Self? = {
        guard let library = SystemLibrary(["libzstd.so.1", "libzstd.so", "libzstd.1.dylib"]),
            let create = library.function("ZSTD_createDCtx", as: Create.self),
            let free = library.function("ZSTD_freeDCtx", as: Free.self),
            let setParameter = library.function("ZSTD_DCtx_setParameter", as: SetParameter.self),
            let decompress = library.function("ZSTD_decompressStream", as: Decompress.self),
            let isError = library.function("ZSTD_isError", as: IsError.self),
            let errorName = library.function("ZSTD_getErrorName", as: ErrorName.self)
        else { return nil }
        return Self(
            create: create, free: free, setParameter: setParameter, decompress: decompress, isError: isError,
            errorName: errorName)
    }()
}
