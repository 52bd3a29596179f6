import Benchmark
import Foundation
import StackFixture
import StrataEncoding
import XMLCoder

/// Strata's XML coders against CoreOffice/XMLCoder on one document: the 1 MiB catalog with its arrays
/// repeated (XMLCoder's only shape), which each side's decoder must read from the other's encoder.
enum XMLPeers {
    static let strataEncoder = StrataEncoding.XMLEncoder(arrayShape: .repeated)
    static let header = XMLHeader(version: 1.0, encoding: "UTF-8")

    static func register() {
        let document = (try? strataEncoder.encodeDocument(Encoders.catalog, rootElement: "catalog")) ?? Data()
        SideBySide.register(
            "XML decoding 1 MiB: Strata vs XMLCoder", operations: 1, bytes: document.count, iterations: 1_000,
            seconds: 10,
            setup: {
                // The same document for both, and each reads what the other writes.
                let peers = try XMLCoder.XMLEncoder().encode(Encoders.catalog, withRootKey: "catalog", header: header)
                let mine = try StrataEncoding.XMLDecoder().decode(Encoders.Catalog.self, from: peers)
                let theirs = try XMLCoder.XMLDecoder().decode(Encoders.Catalog.self, from: document)
                guard mine.products.count == 5_600, theirs.products.count == 5_600,
                    theirs.products.last?.tags == mine.products.last?.tags
                else { throw CocoaError(.coderReadCorrupt) }
            },
            baseline: { blackHole(try XMLCoder.XMLDecoder().decode(Encoders.Catalog.self, from: document)) },
            strata: { blackHole(try StrataEncoding.XMLDecoder().decode(Encoders.Catalog.self, from: document)) }
        )
        SideBySide.register(
            "XML encoding 1 MiB: Strata vs XMLCoder", operations: 1, bytes: document.count, iterations: 1_000,
            seconds: 10,
            baseline: {
                blackHole(try XMLCoder.XMLEncoder().encode(Encoders.catalog, withRootKey: "catalog", header: header))
            },
            strata: { blackHole(try strataEncoder.encodeDocument(Encoders.catalog, rootElement: "catalog")) }
        )
    }
}
