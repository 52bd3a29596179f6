// Uploads a file of a given size as a multipart body through the loopback server and reports the
// process's peak resident memory, failing if it exceeds a limit or if the server saw other bytes.
//
//   swift run -c release --package-path IntegrationTests UploadMemoryCheck --size-mib 1024 --limit-mib 100

import Foundation
import Strata
import StrataTestServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

func argument(_ name: String, default value: Int) -> Int {
    let arguments = CommandLine.arguments
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return value }
    return Int(arguments[index + 1]) ?? value
}

/// Peak resident memory of this process in bytes: `VmHWM` from /proc/self/status on Linux (it
/// belongs to this program's address space; `ru_maxrss` would also count whatever ran in the
/// process before `exec`, such as `swift run` itself), `ru_maxrss` elsewhere.
func peakResidentBytes() -> Int {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
    {
        return kilobytes * 1024
    }
    var usage = rusage()
    #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
    #else
        getrusage(RUSAGE_SELF, &usage)
    #endif
    #if canImport(Darwin)
        return Int(usage.ru_maxrss)
    #else
        return Int(usage.ru_maxrss) * 1024
    #endif
}

let sizeMiB = argument("--size-mib", default: 64)
let limitMiB = argument("--limit-mib", default: 100)
let size = sizeMiB * 1_048_576

// The source file, written in 1 MiB chunks, with its checksum.
let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
    "strata-upload-check-\(UUID().uuidString)")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let source = directory.appendingPathComponent("source.bin")
guard FileManager.default.createFile(atPath: source.path, contents: nil) else {
    print("upload-memory-check: cannot create \(source.path)")
    exit(1)
}
var checksum = CRC32()
do {
    let handle = try FileHandle(forWritingTo: source)
    var offset = 0
    while offset < size {
        var chunk: [UInt8] = []
        chunk.reserveCapacity(1_048_576)
        TestReply.appendGeneratedBytes(offset: offset, count: min(1_048_576, size - offset)) { chunk += $0 }
        checksum.update(chunk)
        try handle.write(contentsOf: chunk)
        offset += chunk.count
    }
    try handle.close()
}

let server = try await TestServer.start()
let transfer = DefaultDataTransferService(
    networkService: DefaultNetworkService(
        configuration: NetworkConfiguration(baseURL: server.baseURL, timeoutInterval: 600),
        sessionManager: URLSessionManager()
    ),
    completionQueue: .global()
)
var form = MultipartFormData()
try form.append(fileURL: source, name: "file", fileName: "source.bin")
let started = ContinuousClock.now
let echo = try await transfer.request(
    Endpoint<MultipartEcho>(
        path: "multipart",
        method: .post,
        bodyParameters: ["purpose": "memory check"],
        bodyEncoding: MultipartEncoding(form: form, temporaryDirectory: directory)
    )
)
let elapsed = ContinuousClock.now - started
try await server.shutdown()

let part = echo.parts.first { $0.name == "file" }
let peak = peakResidentBytes()
let intact = part?.size == size && part?.crc32 == checksum.value
let leftovers =
    (try? FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "source.bin" }) ?? []
print(
    "upload-memory-check: \(sizeMiB) MiB multipart upload in \(elapsed), "
        + "server saw \(part?.size ?? -1) bytes (crc32 \(intact ? "match" : "MISMATCH")), "
        + "peak resident memory \(peak / 1_048_576) MiB (limit \(limitMiB) MiB), temporary files left: \(leftovers.count)"
)
if !intact || peak > limitMiB * 1_048_576 || !leftovers.isEmpty {
    exit(1)
}
