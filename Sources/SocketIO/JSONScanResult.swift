/// Where a validated JSON value sits in the scanned bytes.
struct JSONScanResult: Hashable, Sendable {
    var kind: JSONValueKind
    /// The value itself, without surrounding whitespace.
    var range: Range<Int>
    /// Ranges of the top-level array's elements (empty unless requested and the value is an array).
    var elements: [Range<Int>]
}
