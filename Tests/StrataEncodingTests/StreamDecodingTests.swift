import Foundation
import StrataCore
import StrataEncoding
import Testing

/// Runs `decoder` over `parts`, as a stream would, and returns what it produced and how it ended.
private func run<D: StreamDecoder>(_ decoder: D, _ parts: [Data]) -> (elements: [D.Element], error: (any Error)?) {
    var decoder = decoder
    var elements: [D.Element] = []
    do {
        for part in parts {
            try decoder.decode(part) { elements.append($0) }
        }
        try decoder.finish { elements.append($0) }
        return (elements, nil)
    } catch {
        return (elements, error)
    }
}

private func run<D: StreamDecoder>(_ decoder: D, _ text: String) -> (elements: [D.Element], error: (any Error)?) {
    run(decoder, [Data(text.utf8)])
}

/// `text` split into parts at every byte, and at every pair of positions: each split must decode
/// the same as the whole.
private func everySplit(of text: String) -> [[Data]] {
    let bytes = Array(text.utf8)
    var splits: [[Data]] = [bytes.map { Data([$0]) }]
    for cut in 0...bytes.count {
        splits.append([Data(bytes[..<cut]), Data(bytes[cut...])])
    }
    return splits
}

@Suite struct LineDecoderTests {
    @Test func linesEndWithLFCROrCRLFWhereverThePartsSplit() {
        let text = "one\ntwo\r\nthree\rfour\r\n\r\nsix"
        for parts in everySplit(of: text) {
            let (lines, error) = run(LineDecoder(), parts)
            #expect(error == nil)
            #expect(lines == ["one", "two", "three", "four", "", "six"], "\(parts)")
        }
    }

    @Test func aMultiByteCharacterSplitAcrossPartsDecodesWhole() {
        let (lines, _) = run(LineDecoder(), [Data([0x63, 0x61, 0x66, 0xC3]), Data([0xA9, 0x0A])])
        #expect(lines == ["café"])
        // Invalid UTF-8 becomes U+FFFD rather than failing the stream.
        #expect(run(LineDecoder(), [Data([0x61, 0xFF, 0x0A])]).elements == ["a\u{FFFD}"])
    }

    @Test func aLineOverTheLimitEndsTheStreamAsSoonAsItIsOverAndHoldsNoMore() {
        var decoder = LineDecoder(maximumLength: 1024)
        let chunk = Data(repeating: 0x61, count: 100)
        var thrown: (any Error)?
        var fed = 0
        for _ in 0..<10_000 {
            do {
                try decoder.decode(chunk) { _ in Issue.record("no line ends") }
                fed += chunk.count
            } catch {
                thrown = error
                break
            }
        }
        #expect(thrown as? StreamError == .lineTooLong(limit: 1024))
        #expect(fed <= 1024)
        // A line of exactly the limit is fine.
        #expect(run(LineDecoder(maximumLength: 4), "abcd\nefgh").elements == ["abcd", "efgh"])
        #expect(run(LineDecoder(maximumLength: 4), "abcde\n").error as? StreamError == .lineTooLong(limit: 4))
    }
}

@Suite struct ServerSentEventDecoderTests {
    private func events(_ text: String) -> [ServerSentEvent] {
        run(ServerSentEventDecoder(), text).elements
    }

    @Test func theStandardsExamplesParseAsItSays() {
        // HTML, 9.2.6 "Parsing an event stream" and its examples.
        #expect(events("data: YHOO\ndata: +2\ndata: 10\n\n") == [ServerSentEvent(data: "YHOO\n+2\n10")])
        #expect(
            events(": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n") == [
                ServerSentEvent(data: "first event", lastEventID: "1"),
                ServerSentEvent(data: "second event", lastEventID: ""),
                ServerSentEvent(data: " third event", lastEventID: ""),
            ])
        #expect(events("data\n\ndata\ndata\n\ndata:") == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
        #expect(
            events("data:test\n\ndata: test\n\n") == [ServerSentEvent(data: "test"), ServerSentEvent(data: "test")])
    }

    @Test func everySplitOfAStreamGivesTheSameEvents() {
        let text =
            "\u{FEFF}: hi\r\nevent: add\r\ndata: 1\r\nid: 7\r\n\r\ndata: two\rdata: lines\r\rretry: 2500\nevent\ndata:x\n\n"
        let expected = [
            ServerSentEvent(event: "add", data: "1", lastEventID: "7"),
            ServerSentEvent(data: "two\nlines", lastEventID: "7"),
            ServerSentEvent(data: "x", lastEventID: "7", retry: 2500),
        ]
        for parts in everySplit(of: text) {
            let (parsed, error) = run(ServerSentEventDecoder(), parts)
            #expect(error == nil)
            #expect(parsed == expected, "\(parts.map { Array($0) })")
        }
    }

    @Test func onlyALeadingByteOrderMarkIsSkipped() {
        #expect(events("\u{FEFF}data: a\n\n") == [ServerSentEvent(data: "a")])
        // A second one is part of the text: here, of the field name, which is then unknown.
        #expect(events("\u{FEFF}\u{FEFF}data: a\n\n").isEmpty)
        #expect(events("data: \u{FEFF}a\n\n") == [ServerSentEvent(data: "\u{FEFF}a")])
        // Two bytes of a mark and then the end: text, with no line, so nothing.
        #expect(run(ServerSentEventDecoder(), [Data([0xEF, 0xBB])]).elements.isEmpty)
    }

    @Test func fieldsFollowTheStandardsRules() {
        // The type resets after each event; an empty type is "message".
        #expect(
            events("event: a\ndata: 1\n\ndata: 2\n\nevent:\ndata: 3\n\n").map(\.event) == ["a", "message", "message"])
        // An id with NUL is ignored; the last event ID carries over to later events.
        #expect(events("id: 1\ndata: a\n\nid: x\u{0}y\ndata: b\n\n").map(\.lastEventID) == ["1", "1"])
        // retry only with digits only.
        #expect(events("retry: 10a\ndata: a\n\nretry: 300\ndata: b\n\n").map(\.retry) == [nil, 300])
        var decoder = ServerSentEventDecoder()
        try? decoder.decode(Data("retry: 1200\nid: 9\n".utf8)) { _ in }
        #expect(decoder.reconnectionTime == 1200)
        // Unknown fields and comments are ignored; a field without a colon has an empty value;
        // only one space after the colon is dropped.
        #expect(events("foo: bar\n:comment\ndata\ndata:  two\n\n") == [ServerSentEvent(data: "\n two")])
        // A blank line with no data dispatches nothing, and resets the type.
        #expect(events("event: x\n\ndata: y\n\n") == [ServerSentEvent(data: "y")])
        // The stream ending mid-event drops the event.
        #expect(events("data: a\n\ndata: b\n").map(\.data) == ["a"])
    }

    @Test func anIDCountsOnlyOnceTheBlankLineThatEndsItsEventHasArrived() {
        // The standard sets the event source's last event ID (what a reconnection sends as
        // `Last-Event-ID`) when an event is dispatched, not when its `id` line arrives: a stream cut
        // in the middle of event 2 resumes after event 1, so that event 2 is sent again, not lost.
        var decoder = ServerSentEventDecoder(lastEventID: "0")
        var seen: [ServerSentEvent] = []
        for (part, lastEventID) in [
            ("id: 1\ndata: one\n", "0"), ("\n", "1"), ("id: 2\ndata: tw", "1"), ("o\n", "1"), ("\r\n", "2"),
            // An event of an ID alone still sets it; one with a NUL is ignored, even at its blank line.
            ("id: 3\n", "2"), ("\n", "3"), ("id: 4\u{0}\n\n", "3"),
            // A blank ID clears it at the blank line.
            ("id\n", "3"), ("data: three\n\n", ""), ("id: 5\ndata: cut", ""),
        ] {
            try? decoder.decode(Data(part.utf8)) { seen.append($0) }
            #expect(decoder.lastEventID == lastEventID, "after \(part.debugDescription)")
        }
        try? decoder.finish { seen.append($0) }
        #expect(decoder.lastEventID == "")
        #expect(seen.map(\.data) == ["one", "two", "three"])
        #expect(seen.map(\.lastEventID) == ["1", "2", ""])
        // A connection cut after an ID line but before its event's end resumes from the one before.
        var cut = ServerSentEventDecoder()
        try? cut.decode(Data("id: 1\ndata: a\n\nid: 2\ndata: b\n".utf8)) { _ in }
        try? cut.finish { _ in }
        #expect(cut.lastEventID == "1")
    }

    @Test func anEventOrLineOverItsLimitEndsTheStream() {
        let big = String(repeating: "x", count: 600)
        let decoder = ServerSentEventDecoder(maximumEventSize: 1000, maximumLineLength: 1000)
        let (parsed, error) = run(decoder, "data: a\n\ndata: \(big)\ndata: \(big)\n\n")
        #expect(parsed == [ServerSentEvent(data: "a")])
        #expect(error as? StreamError == .eventTooLarge(limit: 1000))
        let (_, lineError) = run(decoder, "data: \(big)\(big)\n\n")
        #expect(lineError as? StreamError == .lineTooLong(limit: 1000))
    }
}

@Suite struct JSONLinesDecoderTests {
    private struct Row: Decodable, Equatable, Sendable {
        let id: Int
    }

    @Test func eachLineIsDecodedAsItCompletesAndBlankLinesAreSkipped() {
        let text = "{\"id\":1}\n\n{\"id\":2}\r\n  \n{\"id\":3}"
        for parts in everySplit(of: text) {
            let (rows, error) = run(JSONLinesDecoder(Row.self), parts)
            #expect(error == nil)
            #expect(rows == [Row(id: 1), Row(id: 2), Row(id: 3)])
        }
    }

    @Test func aLineThatIsNotAValueEndsTheStreamWithTheLine() {
        let (rows, error) = run(JSONLinesDecoder(Row.self), "{\"id\":1}\n{\"id\":\"x\"}\n{\"id\":3}\n")
        #expect(rows == [Row(id: 1)])
        let failure = try? #require(error as? JSONLinesError)
        #expect(failure?.line == Data("{\"id\":\"x\"}".utf8))
        #expect(failure?.underlying is DecodingError)
    }
}

@Suite struct JSONLinesNestingTests {
    /// A line nested a million levels deep is refused before `JSONDecoder` recurses into it.
    @Test func aLineNestedTooDeepIsAnErrorNotACrash() {
        let depth = 1_000_000
        let line = String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "\n"
        let (values, error) = run(JSONLinesDecoder([Int].self, maximumLength: 4 * depth), line)
        #expect(values.isEmpty)
        #expect(error is JSONLinesError)
    }
}
