import Foundation
import StrataTestServer

// Runs one case of the fault matrix through every Strata layer and prints its FaultReport as a
// line of JSON, or the storm and its summary; exits 0 when the case ended as it must, 1 when not.
// The fault matrix tests start this once per case, so that a case that crashes the process fails
// alone.
//
//     FaultProbe deep-xml
//     FaultProbe storm [seed]

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "storm" {
    let seed = arguments.dropFirst().first.flatMap { UInt64($0) } ?? UInt64(Date().timeIntervalSince1970)
    let (summary, problems) = await Storm.run(seed: seed)
    print(([summary] + problems).joined(separator: "\n"))
    exit(problems.isEmpty ? 0 : 1)
}
guard let name = arguments.first, let fault = FaultCase(rawValue: name) else {
    let cases = FaultCase.allCases.map(\.rawValue).joined(separator: ", ")
    FileHandle.standardError.write(Data("usage: FaultProbe <case> | storm [seed]; cases: \(cases)\n".utf8))
    exit(2)
}
let report = await Probe.run(fault)
let line = (try? JSONEncoder().encode(report)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
print(line)
exit(report.problems.isEmpty ? 0 : 1)
