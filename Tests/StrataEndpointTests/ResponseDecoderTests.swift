import Foundation
import StrataCore
import StrataEncoding
import StrataEndpoint
import StrataTesting
import Testing

@Suite struct ResponseDecoderTests {
    struct Profile: Decodable, Equatable { let firstName: String }

    @Test func jsonDecoderUsesTheGivenJSONDecoder() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        let profile = try JSONResponseDecoder(decoder: decoder).decode(
            Data(#"{"first_name":"Ann"}"#.utf8), as: Profile.self)
        #expect(profile == Profile(firstName: "Ann"))
    }

    /// A server controls how deep its JSON nests; decoding recurses once per level, and a few
    /// hundred levels exhaust a 512 KiB stack. Past the maximum, the body is refused unread.
    @Test(arguments: [10_000, 100_000])
    func aJSONBodyNestedTooDeepIsRefusedBeforeDecoding(depth: Int) async {
        let body = Data((String(repeating: #"{"v":["#, count: depth) + String(repeating: "]}", count: depth)).utf8)
        let error = await runOnThread(stackSize: 512 * 1024) { () -> ResponseDecodingError? in
            do {
                _ = try JSONResponseDecoder().decode(body, as: ParameterValue.self)
                return nil
            } catch {
                return error as? ResponseDecodingError
            }
        }
        #expect(error == .nestingTooDeep(maximum: 100))
    }

    @Test func theJSONDepthLimitCountsArraysAndObjectsButNotBracketsInStrings() throws {
        func nested(_ depth: Int) -> Data {
            Data((String(repeating: "[", count: depth) + #""[{\"]\"[""# + String(repeating: "]", count: depth)).utf8)
        }
        _ = try JSONResponseDecoder(maximumDepth: 3).decode(nested(3), as: ParameterValue.self)
        #expect(throws: ResponseDecodingError.nestingTooDeep(maximum: 3)) {
            try JSONResponseDecoder(maximumDepth: 3).decode(nested(4), as: ParameterValue.self)
        }
        let value = try JSONResponseDecoder().decode(nested(100), as: ParameterValue.self)
        #expect(!value.nests(deeperThan: 100))
    }

    /// A body that is no JSON and says it is another format (a Wi-Fi sign-in page) fails with a
    /// `DecodingError` that names the format; one that says nothing, or says JSON, or is JSON of
    /// another shape, fails as `JSONDecoder` says.
    @Test func aBodyOfAnotherFormatFailsNamingIt() throws {
        let page = Data("<html><body>Sign in to the Wi-Fi</body></html>".utf8)
        func failure(_ data: Data, _ contentType: String?) -> String {
            do {
                _ = try JSONResponseDecoder().decode(data, contentType: contentType, as: [Int].self)
                return "decoded"
            } catch let error as DecodingError {
                guard case .dataCorrupted(let context) = error else { return "other: \(error)" }
                return context.debugDescription
            } catch {
                return "not a DecodingError: \(error)"
            }
        }
        #expect(failure(page, "text/html; charset=utf-8").hasPrefix("The body is text/html, not JSON. "))
        #expect(failure(page, "TEXT/HTML").hasPrefix("The body is text/html, not JSON. "))
        for contentType in [nil, "", "application/json", "application/problem+json"] {
            #expect(!failure(page, contentType).contains("not JSON"), "\(String(describing: contentType))")
        }
        // JSON of another shape: not the format's fault.
        do {
            _ = try JSONResponseDecoder().decode(Data(#"{"a": 1}"#.utf8), contentType: "text/plain", as: [Int].self)
            Issue.record("decoded")
        } catch {
            #expect(!"\(error)".contains("not JSON"))
        }
    }

    @Test func rawDataDecoderReturnsTheBytesAndRejectsOtherTypes() throws {
        let bytes = Data([0xFF, 0x00, 0x7B])
        #expect(try RawDataResponseDecoder().decode(bytes, as: Data.self) == bytes)
        #expect(throws: ResponseDecodingError.unsupportedType("String", decoder: "RawDataResponseDecoder")) {
            try RawDataResponseDecoder().decode(bytes, as: String.self)
        }
    }

    @Test func stringDecoderReadsTextInItsEncodingAndRejectsInvalidBytes() throws {
        #expect(try StringResponseDecoder().decode(Data("héllo".utf8), as: String.self) == "héllo")
        #expect(try StringResponseDecoder(encoding: .isoLatin1).decode(Data([0x68, 0xE9]), as: String.self) == "hé")
        #expect(throws: ResponseDecodingError.self) {
            try StringResponseDecoder().decode(Data([0xFF, 0xFE, 0xFD]), as: String.self)
        }
        #expect(throws: ResponseDecodingError.self) {
            try StringResponseDecoder().decode(Data("1".utf8), as: Int.self)
        }
    }

    /// Without an encoding of its own, the decoder reads the charset the response's media type
    /// names, in any case and quoted or not, and UTF-8 when it names none or one it does not know;
    /// an encoding given wins over the charset.
    @Test(
        arguments: [
            ("text/plain; charset=iso-8859-1", [0x63, 0x61, 0x66, 0xE9], "café"),
            ("text/plain;charset=\"ISO-8859-1\"", [0x63, 0x61, 0x66, 0xE9], "café"),
            ("text/html; Charset = windows-1252 ; q=1", [0x80, 0x31], "€1"),
            ("text/plain; format=flowed; charset=utf-16le", [0x68, 0x00, 0xE9, 0x00], "hé"),
            ("text/plain; charset=windows-1251", [0xEF, 0xF0, 0xE8], "при"),
            ("text/plain", [0x63, 0x61, 0x66, 0xC3, 0xA9], "café"),
            ("text/plain; charset=klingon", [0x63, 0x61, 0x66, 0xC3, 0xA9], "café"),
            ("charset=iso-8859-1", [0x63, 0x61, 0x66, 0xC3, 0xA9], "café"),
        ] as [(String, [UInt8], String)])
    func stringDecoderReadsTheCharsetTheResponseNames(contentType: String, bytes: [UInt8], text: String) throws {
        #expect(try StringResponseDecoder().decode(Data(bytes), contentType: contentType, as: String.self) == text)
    }

    @Test func anEncodingGivenWinsOverTheResponsesCharset() throws {
        let decoder = StringResponseDecoder(encoding: .utf8)
        #expect(throws: ResponseDecodingError.invalidText(encoding: String(describing: String.Encoding.utf8))) {
            try decoder.decode(Data([0x63, 0xE9]), contentType: "text/plain; charset=iso-8859-1", as: String.self)
        }
        #expect(throws: ResponseDecodingError.self) {
            try StringResponseDecoder().decode(Data([0x63, 0xE9]), as: String.self)
        }
    }

    @Test func endpointsPickTheDecoderThatFitsTheirResponseType() throws {
        #expect(Endpoint<Data>(path: "x").responseDecoder is RawDataResponseDecoder)
        #expect(Endpoint<String>(path: "x").responseDecoder is StringResponseDecoder)
        #expect(Endpoint<Profile>(path: "x").responseDecoder is JSONResponseDecoder)
        #expect(
            Endpoint<Profile>(path: "x", responseDecoder: StringResponseDecoder()).responseDecoder
                is StringResponseDecoder)
    }

    @Test func emptyIsTheEmptyResponseValue() {
        #expect(Empty.emptyValue() == Empty())
    }
}

@Suite struct XMLResponseDecoderTests {
    struct Quote: Decodable, Equatable {
        enum CodingKeys: String, CodingKey { case symbol = "@symbol", price }
        let symbol: String
        let price: Double
    }

    @Test func decodesTheRootElement() throws {
        let xml = Data(#"<?xml version="1.0"?><quote symbol="X"><price>12.5</price></quote>"#.utf8)
        #expect(try XMLResponseDecoder().decode(xml, as: Quote.self) == Quote(symbol: "X", price: 12.5))
    }

    @Test func unwrapsASOAPBody() throws {
        let xml = Data(
            (#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Header><t>1</t></s:Header>"#
                + #"<s:Body><quote symbol="Y"><price>3</price></quote></s:Body></s:Envelope>"#).utf8
        )
        #expect(
            try XMLResponseDecoder(unwrapsSOAPBody: true).decode(xml, as: Quote.self) == Quote(symbol: "Y", price: 3))
        #expect(throws: XMLError.self) {
            try XMLResponseDecoder(unwrapsSOAPBody: true).decode(Data("<quote/>".utf8), as: Quote.self)
        }
    }
}
