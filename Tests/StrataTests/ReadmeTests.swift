import Foundation
import Testing

/// Keeps README.md honest: every ```swift block (but the one for Package.swift) must appear, line
/// for line, in ReadmeSnippets.swift, which the test target compiles.
@Suite struct ReadmeTests {
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

    @Test func everyReadmeSwiftBlockIsCompiledInTheSnippetsFile() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let snippets = try String(
            contentsOf: Self.root.appendingPathComponent("Tests/StrataTests/ReadmeSnippets.swift"),
            encoding: .utf8
        )
        let compiled = Self.lines(snippets)
        let blocks = Self.swiftBlocks(in: readme).filter { !$0.hasPrefix(".package(") }
        #expect(blocks.count >= 8)
        for block in blocks {
            let wanted = Self.lines(block)
            let found = compiled.indices.contains { start in
                start + wanted.count <= compiled.count && Array(compiled[start..<start + wanted.count]) == wanted
            }
            #expect(found, "README block not in ReadmeSnippets.swift:\n\(block)")
        }
    }
}
