import Benchmark
import Foundation
import StackFixture
import Strata

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The parameter encodings on documents of a realistic size: MB/s and allocations per document.
enum Encoders {
    typealias Catalog = CatalogFixture.Catalog

    static let catalog = CatalogFixture.catalog

    /// 1,000 keys in ten nested groups of 100, with strings that need percent-encoding.
    static let nestedParameters: [String: ParameterValue] = [
        "filter": .object(
            Dictionary(
                uniqueKeysWithValues: (0..<10).map { group in
                    (
                        "group\(group)",
                        ParameterValue.object(
                            Dictionary(
                                uniqueKeysWithValues: (0..<100).map { key in
                                    ("key\(key)", ParameterValue.string("value \(group)/\(key) & more"))
                                }
                            )
                        )
                    )
                }
            )
        )
    ]

    static let request = URLRequest(url: URL(string: "https://api.example.com/v1/search") ?? URL(fileURLWithPath: "/"))

    static func register() {
        let configuration = Settings.configuration(iterations: 1_000)

        Benchmark("URL encoding, nested 1,000 keys", configuration: configuration) { benchmark in
            let encoded = try URLEncoding.queryString.encode(request, with: nestedParameters)
            benchmark.record(operations: 1, bytes: encoded.url?.query?.utf8.count ?? 0)
        }

        SideBySide.register(
            "JSON encoding 1 MiB: JSONEncoding vs JSONEncoder", operations: 1,
            bytes: (try? JSONEncoding.default.encode(request, withEncodable: catalog).httpBody?.count) ?? 0,
            iterations: 1_000,
            baseline: {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                var request = request
                request.httpBody = try encoder.encode(catalog)
                blackHole(request)
            },
            strata: { blackHole(try JSONEncoding.default.encode(request, withEncodable: catalog)) }
        )

        Benchmark("XML encoding 1 MiB", configuration: configuration) { benchmark in
            let encoded = try XMLEncoding(rootElement: "catalog").encode(request, withEncodable: catalog)
            benchmark.record(operations: 1, bytes: encoded.httpBody?.count ?? 0)
        }
        let xml = Shared<Data>()
        Benchmark("XML decoding 1 MiB", configuration: configuration) { benchmark in
            guard let document = xml.value else { return }
            blackHole(try XMLDecoder().decode(Catalog.self, from: document))
            benchmark.record(operations: 1, bytes: document.count)
        } setup: {
            xml.value = try XMLEncoder().encodeDocument(catalog, rootElement: "catalog")
        }

        let file = Data((0..<10_240).map { UInt8(truncatingIfNeeded: $0) })
        Benchmark("Multipart building, 100 parts", configuration: configuration) { benchmark in
            var form = MultipartFormData(boundary: "strata-benchmark-boundary")
            for index in 0..<50 {
                form.append(.string("field value \(index)"), name: "field\(index)")
                form.append(
                    file, name: "file\(index)", fileName: "file\(index).bin", mimeType: "application/octet-stream")
            }
            let body = try form.encoded()
            benchmark.record(operations: 1, bytes: body.count)
        }
    }
}
