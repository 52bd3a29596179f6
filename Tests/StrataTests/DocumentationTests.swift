import Foundation
import Testing

/// Keeps the README and the DocC catalogs honest: every ```swift block (but Package.swift fragments)
/// must appear, line for line, in ReadmeSnippets.swift or DocumentationSnippets.swift, which the test
/// target compiles, or — for the README's blocks on AsyncHTTPClient and on observability — in the
/// ReadmeSnippets.swift of the StrataAsyncHTTPClient or StrataObservability package's tests, which
/// that package compiles.
@Suite struct DocumentationTests {
    private static let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The non-blank lines of `text`, trimmed.
    private static func lines(_ text: some StringProtocol) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { !$0.isEmpty }
    }

    private static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.hasPrefix("```swift") {
                current = []
            } else if current != nil, line.hasPrefix("```") {
                blocks.append((current ?? []).joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    private static let compiled: [String] = {
        let files = [
            "Tests/StrataTests/ReadmeSnippets.swift", "Tests/StrataTests/DocumentationSnippets.swift",
            "StrataAsyncHTTPClient/Tests/StrataAsyncHTTPClientTests/ReadmeSnippets.swift",
            "StrataObservability/Tests/StrataObservabilityTests/ReadmeSnippets.swift",
        ]
        return files.flatMap { path in
            lines((try? String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)) ?? "")
        }
    }()

    /// The README and every article and landing page of the catalogs under Sources, and of
    /// StrataObservability's.
    static let documents: [String] = {
        let sources = root.appendingPathComponent("Sources")
        let catalogs = (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? []
        let pages = catalogs.sorted().flatMap { module -> [String] in
            let catalog = "Sources/\(module)/\(module).docc"
            let files =
                (try? FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent(catalog).path))
            return (files ?? []).filter { $0.hasSuffix(".md") }.sorted().map { "\(catalog)/\($0)" }
        }
        // The catalogs of the packages beside the root that have one.
        let observability = "StrataObservability/Sources/StrataObservability/StrataObservability.docc"
        let files = try? FileManager.default.contentsOfDirectory(
            atPath: root.appendingPathComponent(observability).path)
        let packages = (files ?? []).filter { $0.hasSuffix(".md") }.sorted().map { "\(observability)/\($0)" }
        return ["README.md"] + pages + packages
    }()

    @Test func everyModuleHasACatalog() {
        #expect(Self.documents.count >= 15, "\(Self.documents)")
    }

    @Test(arguments: DocumentationTests.documents)
    func everySwiftBlockIsCompiled(document: String) throws {
        let markdown = try String(contentsOf: Self.root.appendingPathComponent(document), encoding: .utf8)
        for block in Self.swiftBlocks(in: markdown) where !block.hasPrefix(".package(") {
            let wanted = Self.lines(block)
            let found = Self.compiled.indices.contains { start in
                start + wanted.count <= Self.compiled.count
                    && Array(Self.compiled[start..<start + wanted.count]) == wanted
            }
            #expect(found, "\(document): block not in a snippets file:\n\(block)")
        }
    }
}
