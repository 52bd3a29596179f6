import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The memory this process has used, for the memory checks and benchmarks.
public enum ProcessMemory {
    /// Resident memory of this process now, in bytes: `VmRSS` from /proc/self/status on Linux;
    /// `nil` where there is none.
    public static func currentResidentBytes() -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
        else { return nil }
        return kilobytes * 1024
    }

    /// Peak resident memory of this process in bytes: `VmHWM` from /proc/self/status on Linux (it
    /// belongs to this program's address space; `ru_maxrss` would also count whatever ran in the
    /// process before `exec`, such as `swift run` itself), `ru_maxrss` elsewhere.
    public static func peakResidentBytes() -> Int {
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
}
