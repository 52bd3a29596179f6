import Foundation
import StrataEncoding
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Documents in the formats services publish, written here from each format's specification, each
/// decoded into plain Codable types (no `init(from:)` of their own) and, where the format has no
/// mixed content, encoded back and decoded again to the same value.
@Suite struct XMLFixtureTests {
    /// Encodes `value` with repeated arrays and decodes it again.
    private func roundTrip<T: Codable & Equatable>(
        _ value: T, root: String, encoder: XMLEncoder = XMLEncoder(arrayShape: .repeated),
        decoder: XMLDecoder = XMLDecoder()
    ) throws {
        let data = try encoder.encodeDocument(value, rootElement: root)
        #expect(try decoder.decode(T.self, from: data) == value, "\(String(decoding: data, as: UTF8.self))")
    }

    // MARK: RSS 2.0 (RSS Advisory Board specification)

    struct RSS: Codable, Equatable {
        enum CodingKeys: String, CodingKey { case version = "@version", channel }
        struct Category: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case domain = "@domain", name = "#text" }
            let domain: String?
            let name: String
        }
        struct Image: Codable, Equatable {
            let url: URL
            let title: String
            let link: URL
        }
        struct Enclosure: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case url = "@url", length = "@length", type = "@type" }
            let url: URL
            let length: Int
            let type: String
        }
        struct GUID: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case isPermaLink = "@isPermaLink", value = "#text" }
            let isPermaLink: Bool?
            let value: String
        }
        struct Item: Codable, Equatable {
            let title: String
            let link: URL
            let description: String
            let author: String?
            let category: [Category]
            let enclosure: Enclosure?
            let guid: GUID
            let pubDate: Date
            let creator: String?
        }
        struct Channel: Codable, Equatable {
            let title: String
            let link: URL
            let description: String
            let language: String?
            let pubDate: Date?
            let ttl: Int?
            let category: [Category]
            let image: Image?
            let item: [Item]
        }
        let version: String
        let channel: Channel
    }

    static let rss = """
        <?xml version="1.0" encoding="UTF-8"?>
        <rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
          <channel>
            <title>Strata Engineering</title>
            <link>https://strata.example.org/blog</link>
            <description>Notes on building a networking layer &amp; testing it.</description>
            <language>en-gb</language>
            <pubDate>Mon, 23 Nov 2026 08:00:00 +0000</pubDate>
            <ttl>60</ttl>
            <category domain="https://strata.example.org/topics">Networking</category>
            <image>
              <url>https://strata.example.org/logo.png</url>
              <title>Strata Engineering</title>
              <link>https://strata.example.org/blog</link>
            </image>
            <item>
              <title>Repeated elements, finally</title>
              <link>https://strata.example.org/blog/repeated</link>
              <description><![CDATA[<p>Arrays without a <b>wrapper</b>.</p>]]></description>
              <author>team@strata.example.org (Strata Team)</author>
              <category>XML</category>
              <category domain="https://strata.example.org/topics">Codable</category>
              <guid isPermaLink="true">https://strata.example.org/blog/repeated</guid>
              <pubDate>Sun, 22 Nov 2026 18:30:00 +0100</pubDate>
              <dc:creator>Strata Team</dc:creator>
            </item>
            <item>
              <title>Episode 12: timeouts</title>
              <link>https://strata.example.org/podcast/12</link>
              <description>Deadlines &lt;per attempt&gt;.</description>
              <enclosure url="https://strata.example.org/podcast/12.mp3" length="24986239" type="audio/mpeg"/>
              <guid isPermaLink="false">podcast-12</guid>
              <pubDate>Fri, 20 Nov 2026 09:00:00 GMT</pubDate>
            </item>
          </channel>
        </rss>
        """

    static let rfc822: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
        return formatter
    }()

    @Test func rss2() throws {
        let decoder = XMLDecoder(dateDecoding: .formatted(Self.rfc822))
        let feed = try decoder.decode(RSS.self, from: Data(Self.rss.utf8))
        #expect(feed.version == "2.0")
        #expect(feed.channel.description == "Notes on building a networking layer & testing it.")
        #expect(feed.channel.category == [.init(domain: "https://strata.example.org/topics", name: "Networking")])
        #expect(feed.channel.item.count == 2)
        let first = feed.channel.item[0]
        #expect(first.description == "<p>Arrays without a <b>wrapper</b>.</p>")
        #expect(first.category.map(\.name) == ["XML", "Codable"])
        #expect(first.guid == .init(isPermaLink: true, value: "https://strata.example.org/blog/repeated"))
        #expect(first.creator == "Strata Team")
        #expect(first.pubDate == Date(timeIntervalSince1970: 1_795_368_600))
        let second = feed.channel.item[1]
        #expect(second.enclosure?.length == 24_986_239 && second.category == [] && second.author == nil)
        #expect(second.guid.isPermaLink == false)
        let formatter = Self.rfc822
        try roundTrip(
            feed, root: "rss",
            encoder: XMLEncoder(dateEncoding: .custom { formatter.string(from: $0) }, arrayShape: .repeated),
            decoder: decoder)
    }

    // MARK: Atom (RFC 4287)

    struct Atom: Codable, Equatable {
        struct Text: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case type = "@type", value = "#text" }
            let type: String?
            let value: String
        }
        struct Link: Codable, Equatable {
            enum CodingKeys: String, CodingKey {
                case href = "@href", rel = "@rel", type = "@type", hreflang = "@hreflang"
            }
            let href: URL
            let rel: String?
            let type: String?
            let hreflang: String?
        }
        struct Person: Codable, Equatable {
            let name: String
            let uri: URL?
            let email: String?
        }
        struct Category: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case term = "@term", scheme = "@scheme", label = "@label" }
            let term: String
            let scheme: URL?
            let label: String?
        }
        struct Content: Codable, Equatable {
            struct Division: Codable, Equatable { let p: [String] }
            enum CodingKeys: String, CodingKey { case type = "@type", div }
            let type: String
            let div: Division
        }
        struct Entry: Codable, Equatable {
            let title: Text
            let link: [Link]
            let id: String
            let updated: Date
            let published: Date?
            let author: [Person]
            let category: [Category]
            let summary: Text?
            let content: Content?
        }
        let title: Text
        let subtitle: Text?
        let link: [Link]
        let id: String
        let updated: Date
        let author: [Person]
        let generator: String?
        let entry: [Entry]
    }

    static let atom = """
        <?xml version="1.0" encoding="utf-8"?>
        <feed xmlns="http://www.w3.org/2005/Atom" xml:lang="en">
          <title type="text">Strata releases</title>
          <subtitle type="html">What changed &lt;and why&gt;</subtitle>
          <link rel="self" type="application/atom+xml" href="https://strata.example.org/releases.atom"/>
          <link rel="alternate" type="text/html" hreflang="en" href="https://strata.example.org/releases"/>
          <id>tag:strata.example.org,2026:releases</id>
          <updated>2026-11-23T08:00:00Z</updated>
          <author><name>Strata Team</name><uri>https://strata.example.org</uri></author>
          <generator>hand written</generator>
          <entry>
            <title>1.4: XML as services send it</title>
            <link href="https://strata.example.org/releases/1.4"/>
            <id>tag:strata.example.org,2026:1.4</id>
            <updated>2026-11-23T08:00:00Z</updated>
            <published>2026-11-22T21:15:30.250+01:00</published>
            <author><name>Ann</name><email>ann@strata.example.org</email></author>
            <author><name>Bo</name></author>
            <category term="xml" scheme="https://strata.example.org/tags" label="XML"/>
            <category term="codable"/>
            <summary>Repeated elements, namespaces and speed.</summary>
            <content type="xhtml">
              <div xmlns="http://www.w3.org/1999/xhtml"><p>Faster.</p><p>Typed faults.</p></div>
            </content>
          </entry>
          <entry>
            <title type="text">1.3.1</title>
            <link rel="alternate" href="https://strata.example.org/releases/1.3.1"/>
            <id>tag:strata.example.org,2026:1.3.1</id>
            <updated>2026-10-01T12:00:00Z</updated>
          </entry>
        </feed>
        """

    @Test func atom() throws {
        let feed = try XMLDecoder().decode(Atom.self, from: Data(Self.atom.utf8))
        #expect(feed.title == .init(type: "text", value: "Strata releases"))
        #expect(feed.subtitle?.value == "What changed <and why>")
        #expect(feed.link.map(\.rel) == ["self", "alternate"] && feed.link[1].hreflang == "en")
        #expect(feed.author == [.init(name: "Strata Team", uri: URL(string: "https://strata.example.org"), email: nil)])
        #expect(feed.entry.count == 2)
        let entry = feed.entry[0]
        #expect(entry.author.map(\.name) == ["Ann", "Bo"])
        #expect(entry.category.map(\.term) == ["xml", "codable"])
        #expect(entry.content == .init(type: "xhtml", div: .init(p: ["Faster.", "Typed faults."])))
        #expect(entry.published == Date(timeIntervalSince1970: 1_795_378_530.25))
        #expect(feed.entry[1].author == [] && feed.entry[1].published == nil && feed.entry[1].link.count == 1)
        try roundTrip(feed, root: "feed")
    }

    // MARK: Sitemaps (sitemaps.org protocol 0.9)

    struct Sitemap: Codable, Equatable {
        enum ChangeFrequency: String, Codable { case always, hourly, daily, weekly, monthly, yearly, never }
        struct Location: Codable, Equatable {
            let loc: URL
            let lastmod: Date?
            let changefreq: ChangeFrequency?
            let priority: Double?
        }
        let url: [Location]
    }

    static let sitemap = """
        <?xml version="1.0" encoding="UTF-8"?>
        <urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
          <url>
            <loc>https://strata.example.org/</loc>
            <lastmod>2026-11-23</lastmod>
            <changefreq>daily</changefreq>
            <priority>1.0</priority>
          </url>
          <url>
            <loc>https://strata.example.org/docs?topic=xml&amp;lang=en</loc>
            <lastmod>2026-11-20T17:45:00+00:00</lastmod>
            <priority>0.8</priority>
          </url>
          <url><loc>https://strata.example.org/about</loc></url>
        </urlset>
        """

    /// W3C Datetime as sitemaps use it: a date alone, or a date and time.
    static let w3cDatetime = XMLDecoder.DateDecoding.custom { text in
        (try? Date.ISO8601FormatStyle().parse(text))
            ?? (try? Date.ISO8601FormatStyle().year().month().day().parse(text))
    }

    @Test func sitemap() throws {
        let decoder = XMLDecoder(dateDecoding: Self.w3cDatetime)
        let map = try decoder.decode(Sitemap.self, from: Data(Self.sitemap.utf8))
        #expect(map.url.count == 3)
        #expect(map.url[0].lastmod == Date(timeIntervalSince1970: 1_795_392_000))
        #expect(map.url[0].changefreq == .daily && map.url[0].priority == 1)
        #expect(map.url[1].loc.absoluteString == "https://strata.example.org/docs?topic=xml&lang=en")
        #expect(map.url[1].lastmod == Date(timeIntervalSince1970: 1_795_196_700))
        #expect(
            map.url[2]
                == .init(
                    loc: URL(string: "https://strata.example.org/about")!, lastmod: nil, changefreq: nil, priority: nil)
        )
        try roundTrip(map, root: "urlset", decoder: decoder)
    }

    // MARK: SOAP 1.1 (W3C note) and 1.2 (W3C recommendation)

    struct TradePrice: Codable, Equatable {
        enum CodingKeys: String, CodingKey { case symbol = "@symbol", price = "Price", currency = "Currency" }
        let symbol: String
        let price: Decimal
        let currency: String
    }

    static let soap11Response = """
        <?xml version="1.0" encoding="UTF-8"?>
        <SOAP-ENV:Envelope xmlns:SOAP-ENV="http://schemas.xmlsoap.org/soap/envelope/"
            SOAP-ENV:encodingStyle="http://schemas.xmlsoap.org/soap/encoding/">
          <SOAP-ENV:Header><t:Transaction xmlns:t="urn:trading" SOAP-ENV:mustUnderstand="1">7</t:Transaction></SOAP-ENV:Header>
          <SOAP-ENV:Body>
            <m:GetTradePriceResponse xmlns:m="urn:trading" symbol="STRA">
              <m:Price>34.5</m:Price><m:Currency>EUR</m:Currency>
            </m:GetTradePriceResponse>
          </SOAP-ENV:Body>
        </SOAP-ENV:Envelope>
        """

    static let soap11Fault = """
        <?xml version="1.0" encoding="UTF-8"?>
        <soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/">
          <soapenv:Body>
            <soapenv:Fault>
              <faultcode>soapenv:Client.Authentication</faultcode>
              <faultstring xml:lang="en">The merchant key is not valid for this terminal.</faultstring>
              <faultactor>https://pay.example.com/gateway</faultactor>
              <detail>
                <p:PaymentError xmlns:p="urn:payments"><p:code>4031</p:code><p:retryable>false</p:retryable></p:PaymentError>
              </detail>
            </soapenv:Fault>
          </soapenv:Body>
        </soapenv:Envelope>
        """

    struct PaymentError: Codable, Equatable {
        let code: Int
        let retryable: Bool
    }

    @Test func soap11ResponseAndFault() throws {
        let price = try XMLDecoder().decode(TradePrice.self, fromSOAPEnvelope: Data(Self.soap11Response.utf8))
        #expect(price == TradePrice(symbol: "STRA", price: Decimal(string: "34.5") ?? 0, currency: "EUR"))
        do {
            _ = try XMLDecoder().decode(TradePrice.self, fromSOAPEnvelope: Data(Self.soap11Fault.utf8))
            Issue.record("A fault decoded as a response")
        } catch let fault as SOAPFault {
            #expect(fault.version == .v1_1)
            #expect(fault.code == "Client.Authentication")
            #expect(fault.reason == "The merchant key is not valid for this terminal.")
            #expect(fault.node == "https://pay.example.com/gateway")
            let detail = try #require(fault.detail)
            let error = try XMLDecoder().decode(PaymentError.self, from: try #require(detail.elements.first))
            #expect(error == PaymentError(code: 4031, retryable: false))
            #expect(
                "\(fault)" == "SOAP 1.1 fault Client.Authentication: The merchant key is not valid for this terminal.")
        }
        #expect(SOAPFault(from: Data(Self.soap11Fault.utf8))?.code == "Client.Authentication")
        #expect(SOAPFault(from: Data(Self.soap11Response.utf8)) == nil)
    }

    static let soap12Response = """
        <?xml version="1.0" ?>
        <S:Envelope xmlns:S="http://www.w3.org/2003/05/soap-envelope">
          <S:Body>
            <ns2:GetTradePriceResponse xmlns:ns2="urn:trading" symbol="STRA">
              <Price>35</Price><Currency>EUR</Currency>
            </ns2:GetTradePriceResponse>
          </S:Body>
        </S:Envelope>
        """

    static let soap12Fault = """
        <?xml version="1.0" encoding="UTF-8"?>
        <env:Envelope xmlns:env="http://www.w3.org/2003/05/soap-envelope" xmlns:q="urn:quota">
          <env:Body>
            <env:Fault>
              <env:Code>
                <env:Value>env:Sender</env:Value>
                <env:Subcode>
                  <env:Value>q:QuotaExceeded</env:Value>
                  <env:Subcode><env:Value>q:Daily</env:Value></env:Subcode>
                </env:Subcode>
              </env:Code>
              <env:Reason>
                <env:Text xml:lang="en">All 1000 calls for today are used.</env:Text>
                <env:Text xml:lang="nb">Alle 1000 kall for i dag er brukt.</env:Text>
              </env:Reason>
              <env:Node>https://api.example.com/quota</env:Node>
              <env:Role>http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver</env:Role>
              <env:Detail><q:ResetsAt>2026-11-24T00:00:00Z</q:ResetsAt></env:Detail>
            </env:Fault>
          </env:Body>
        </env:Envelope>
        """

    @Test func soap12ResponseAndFault() throws {
        let price = try XMLDecoder().decode(TradePrice.self, fromSOAPEnvelope: Data(Self.soap12Response.utf8))
        #expect(price.price == 35)
        #expect(throws: SOAPFault.self) {
            try XMLDecoder().decode(TradePrice.self, fromSOAPEnvelope: Data(Self.soap12Fault.utf8))
        }
        let fault = try #require(SOAPFault(from: Data(Self.soap12Fault.utf8)))
        #expect(fault.version == .v1_2)
        #expect(fault.code == "Sender" && fault.subcodes == ["QuotaExceeded", "Daily"])
        #expect(fault.reason == "All 1000 calls for today are used.")
        #expect(fault.node == "https://api.example.com/quota")
        #expect(fault.role == "http://www.w3.org/2003/05/soap-envelope/role/ultimateReceiver")
        struct Detail: Decodable { let ResetsAt: Date }
        let detail = try XMLDecoder().decode(Detail.self, from: try #require(fault.detail))
        #expect(detail.ResetsAt == Date(timeIntervalSince1970: 1_795_478_400))
        #expect("\(fault)" == "SOAP 1.2 fault Sender/QuotaExceeded/Daily: All 1000 calls for today are used.")
    }

    @Test func soapRequestsStrataWritesAreReadBack() throws {
        struct GetTradePrice: Codable, Equatable, Sendable {
            enum CodingKeys: String, CodingKey { case symbol = "@symbol", fields = "Field" }
            let symbol: String
            let fields: [String]
        }
        let value = GetTradePrice(symbol: "STRA", fields: ["Price", "Currency"])
        var request = URLRequest(url: URL(fileURLWithPath: "/"))
        for version in [XMLEncoding.SOAPVersion.v1_1, .v1_2] {
            let encoding = XMLEncoding.soap(
                version, operation: "GetTradePrice", encoder: XMLEncoder(arrayShape: .repeated))
            request = try encoding.encode(request, withEncodable: value)
            #expect(
                try XMLDecoder().decode(GetTradePrice.self, fromSOAPEnvelope: try #require(request.httpBody)) == value)
        }
    }

    // MARK: S3 ListObjectsV2 (ListBucketResult)

    struct ListBucketResult: Codable, Equatable {
        struct Owner: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case id = "ID", displayName = "DisplayName" }
            let id: String
            let displayName: String?
        }
        struct Object: Codable, Equatable {
            enum CodingKeys: String, CodingKey {
                case key = "Key", lastModified = "LastModified", eTag = "ETag", size = "Size",
                    storageClass = "StorageClass", owner = "Owner"
            }
            let key: String
            let lastModified: Date
            let eTag: String
            let size: Int64
            let storageClass: String
            let owner: Owner?
        }
        struct CommonPrefix: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case prefix = "Prefix" }
            let prefix: String
        }
        enum CodingKeys: String, CodingKey {
            case name = "Name", prefix = "Prefix", delimiter = "Delimiter", keyCount = "KeyCount",
                maxKeys = "MaxKeys", isTruncated = "IsTruncated", continuationToken = "NextContinuationToken",
                contents = "Contents", commonPrefixes = "CommonPrefixes"
        }
        let name: String
        let prefix: String?
        let delimiter: String?
        let keyCount: Int
        let maxKeys: Int
        let isTruncated: Bool
        let continuationToken: String?
        let contents: [Object]
        let commonPrefixes: [CommonPrefix]
    }

    static let listBucket = """
        <?xml version="1.0" encoding="UTF-8"?>
        <ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
          <Name>strata-photos</Name>
          <Prefix>2026/</Prefix>
          <Delimiter>/</Delimiter>
          <KeyCount>3</KeyCount>
          <MaxKeys>2</MaxKeys>
          <IsTruncated>true</IsTruncated>
          <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
          <Contents>
            <Key>2026/harbour &amp; boats.jpg</Key>
            <LastModified>2026-11-20T10:15:30.000Z</LastModified>
            <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag>
            <Size>5368709120</Size>
            <StorageClass>STANDARD</StorageClass>
            <Owner><ID>75aa57f09aa0c8caeab4f8c24e99d10f8e7faeebf76c078efc7c6caea54ba06a</ID><DisplayName>strata</DisplayName></Owner>
          </Contents>
          <Contents>
            <Key>2026/index.html</Key>
            <LastModified>2026-11-21T08:00:00.000Z</LastModified>
            <ETag>"a1"</ETag>
            <Size>512</Size>
            <StorageClass>STANDARD_IA</StorageClass>
          </Contents>
          <CommonPrefixes><Prefix>2026/raw/</Prefix></CommonPrefixes>
        </ListBucketResult>
        """

    @Test func s3ListBucketResult() throws {
        let result = try XMLDecoder().decode(ListBucketResult.self, from: Data(Self.listBucket.utf8))
        #expect(result.name == "strata-photos" && result.keyCount == 3 && result.isTruncated)
        #expect(result.contents.map(\.key) == ["2026/harbour & boats.jpg", "2026/index.html"])
        #expect(result.contents[0].eTag == "\"9b2cf535f27731c974343645a3985328\"")
        #expect(result.contents[0].size == 5_368_709_120)
        #expect(result.contents[0].owner?.displayName == "strata" && result.contents[1].owner == nil)
        #expect(result.contents[1].lastModified == Date(timeIntervalSince1970: 1_795_248_000))
        #expect(result.commonPrefixes == [.init(prefix: "2026/raw/")])
        try roundTrip(result, root: "ListBucketResult")
    }

    // MARK: XHTML (XHTML 1.0, mixed content)

    struct Page: Codable, Equatable {
        struct Meta: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case name = "@name", content = "@content" }
            let name: String
            let content: String
        }
        struct Head: Codable, Equatable {
            let title: String
            let meta: [Meta]
        }
        struct Heading: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case id = "@id", text = "#text" }
            let id: String
            let text: String
        }
        struct Link: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case href = "@href", label = "#text" }
            let href: URL
            let label: String
        }
        struct Paragraph: Codable, Equatable {
            enum CodingKeys: String, CodingKey { case style = "@class", text = "#text", em, code, a }
            let style: String?
            let text: String
            let em: [String]
            let code: [String]
            let a: [Link]
        }
        struct List: Codable, Equatable { let li: [String] }
        struct Body: Codable, Equatable {
            let h1: Heading
            let p: [Paragraph]
            let ul: List
        }
        enum CodingKeys: String, CodingKey { case lang = "@lang", head, body }
        let lang: String
        let head: Head
        let body: Body
    }

    static let xhtml = """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">
        <html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en" lang="en">
          <head>
            <title>Release notes</title>
            <meta name="author" content="Strata"/>
            <meta name="keywords" content="xml, codable"/>
          </head>
          <body>
            <h1 id="top">Strata 1.4</h1>
            <p class="lead">Strata reads <em>repeated</em> elements, <code>#text</code> &amp; <em>namespaces</em>.</p>
            <p>A second&#160;paragraph, with <a href="https://strata.example.org/?a=1&amp;b=2">a link</a>.</p>
            <ul><li>One</li><li>Two, <strong>in bold</strong></li></ul>
            <hr/>
          </body>
        </html>
        """

    @Test func xhtmlMixedContent() throws {
        let page = try XMLDecoder().decode(Page.self, from: Data(Self.xhtml.utf8))
        #expect(page.lang == "en")
        #expect(page.head.meta.map(\.name) == ["author", "keywords"])
        #expect(page.body.h1 == .init(id: "top", text: "Strata 1.4"))
        let lead = page.body.p[0]
        #expect(lead.style == "lead" && lead.em == ["repeated", "namespaces"] && lead.code == ["#text"])
        #expect(lead.text == "Strata reads  elements,  & .")
        #expect(page.body.p[1].text == "A second\u{A0}paragraph, with .")
        #expect(page.body.p[1].a.first?.href.absoluteString == "https://strata.example.org/?a=1&b=2")
        #expect(page.body.ul.li == ["One", "Two, in bold"])
        // Each paragraph's whole text, in order, as a reader sees it.
        struct Text: Decodable { let p: [String] }
        struct Document: Decodable { let body: Text }
        #expect(
            try XMLDecoder().decode(Document.self, from: Data(Self.xhtml.utf8)).body.p == [
                "Strata reads repeated elements, #text & namespaces.", "A second\u{A0}paragraph, with a link.",
            ])
    }
}
