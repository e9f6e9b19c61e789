import HTTPTypes
import Hummingbird

/// A page of a list: `{"data": [...], "nextCursor": "..."}`, with `nextCursor` `null` on the
/// last page. Clients pass `nextCursor` back as `?cursor=` for the next page.
struct PagedAPIResponse<Element: Encodable & Sendable>: ResponseGenerator, Sendable {
    private struct Envelope: Encodable {
        var data: [Element]
        var nextCursor: String?

        enum CodingKeys: String, CodingKey {
            case data, nextCursor
        }

        /// Writes `nextCursor` even when it is `nil`, so the end of the list is explicit.
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(data, forKey: .data)
            try container.encode(nextCursor, forKey: .nextCursor)
        }
    }

    /// The page's items.
    var items: [Element]
    /// The opaque cursor of the next page; `nil` on the last.
    var nextCursor: String?

    /// Creates a page response.
    init(_ items: [Element], nextCursor: String?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    /// The JSON body, status 200.
    func response(from request: Request, context: some RequestContext) throws -> Response {
        try context.responseEncoder.encode(Envelope(data: items, nextCursor: nextCursor), from: request, context: context)
    }
}
