/// Where a validated JSON value sits in the scanned bytes.
struct JSONScanResult: Hashable, Sendable {
    var kind: JSONValueKind
    /// The value itself, without surrounding whitespace.
    var range: Range<Int>
    /// Ranges of the top-level array's elements, or object's member values (empty unless
    /// requested for the value's kind).
    var elements: [Range<Int>]
    /// For a top-level object, where each member's name token is (quotes included), in the
    /// order of `elements`.
    var memberNames: [Range<Int>] = []
}
