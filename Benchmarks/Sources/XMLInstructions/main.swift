// Decodes or encodes the 1 MiB catalog as XML a given number of times, with Strata's coders or
// XMLCoder's, for valgrind's callgrind to count instructions and show where they go:
//
//   valgrind --tool=callgrind Benchmarks/.build/release/XMLInstructions strata-decode 3
//   callgrind_annotate --inclusive=yes callgrind.out.<pid> | head -60
//
// Sides: strata-decode, strata-encode, xmlcoder-decode, xmlcoder-encode. Both read and write the
// same document: arrays repeated, XMLCoder's only shape.

import Foundation
import StackFixture
import StrataEncoding
import XMLCoder

let arguments = CommandLine.arguments.dropFirst()
let side = arguments.first ?? "strata-decode"
let count = Int(arguments.dropFirst().first ?? "") ?? 1
let catalog = CatalogFixture.catalog
let encoder = StrataEncoding.XMLEncoder(arrayShape: .repeated)
let document = try encoder.encodeDocument(catalog, rootElement: "catalog")

var bytes = 0
for _ in 0..<count {
    switch side {
    case "strata-decode":
        bytes += try StrataEncoding.XMLDecoder().decode(CatalogFixture.Catalog.self, from: document).products.count
    case "strata-encode":
        bytes += try encoder.encodeDocument(catalog, rootElement: "catalog").count
    case "xmlcoder-decode":
        bytes += try XMLCoder.XMLDecoder().decode(CatalogFixture.Catalog.self, from: document).products.count
    case "xmlcoder-encode":
        bytes += try XMLCoder.XMLEncoder().encode(catalog, withRootKey: "catalog").count
    default:
        print("usage: XMLInstructions strata-decode|strata-encode|xmlcoder-decode|xmlcoder-encode [count]")
        exit(2)
    }
}
print(side, count, bytes)
