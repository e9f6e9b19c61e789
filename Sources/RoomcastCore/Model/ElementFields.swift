/// Validated element fields from a client, as Redis stores them.
///
/// Unknown fields are refused (not ignored): a client that misspells `positionX` learns it at
/// once instead of seeing its change silently dropped.
public struct ElementFields: Sendable, Hashable {
    /// Element types the app knows.
    public static let types: Set<String> = ["note", "photo", "audio", "video", "sticker"]

    /// Numeric fields and their accepted ranges (every number must be finite).
    static let numbers: [String: ClosedRange<Double>] = [
        "positionX": -1e7...1e7, "positionY": -1e7...1e7,
        "width": Double.leastNonzeroMagnitude...1e6, "height": Double.leastNonzeroMagnitude...1e6,
        "rotation": -1e6...1e6,
        "scaleX": Double.leastNonzeroMagnitude...1000, "scaleY": Double.leastNonzeroMagnitude...1000,
        "duration": 0...1e6,
    ]
    /// Text fields and their maximum lengths in characters. `content` is free text whose limit
    /// is a node setting, checked by ``checkContent(atMost:)``; this is only its ceiling.
    static let strings: [String: Int] = [
        "content": maximumContentLength, "imageUrl": 2048, "audioUrl": 2048, "videoUrl": 2048, "thumbnailUrl": 2048, "stickerText": 800,
    ]
    /// The highest `content` limit a node may be configured with.
    public static let maximumContentLength = 10_000_000
    /// Fields a transform may change.
    public static let transformFields: Set<String> = ["scaleX", "scaleY", "rotation", "width", "height", "positionX", "positionY"]
    /// Fields every new element has.
    static let required = ["type", "positionX", "positionY", "width", "height"]

    /// One field as Redis stores it (numbers in decimal text).
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
    }

    /// The fields in a stable order, ready for `HSET`.
    public private(set) var values: [Field] = []

    /// True when the fields move the element (a move brings it to front).
    public var changesPosition: Bool { values.contains { $0.name == "positionX" || $0.name == "positionY" } }

    /// The names present.
    public var names: [String] { values.map(\.name) }

    /// Field, value, field, value …: what an element function takes for its fields.
    var words: [String] {
        var words: [String] = []
        words.reserveCapacity(values.count * 2)
        for field in values {
            words.append(field.name)
            words.append(field.value)
        }
        return words
    }

    /// Reads the fields of `object`, allowing only `allowed` and skipping `ignoring`.
    public init(from decoder: any Decoder, allowed: Set<String>, ignoring: Set<String> = []) throws {
        let container = try decoder.container(keyedBy: FieldKey.self)
        for key in container.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) where !ignoring.contains(key.stringValue) {
            let name = key.stringValue
            guard allowed.contains(name) else {
                throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "unknown or read-only field")
            }
            if let range = Self.numbers[name] {
                let number = try container.decode(Double.self, forKey: key)
                guard number.isFinite, range.contains(number) else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be a finite number in \(range.lowerBound)...\(range.upperBound)")
                }
                values.append(Field(name: name, value: "\(number)"))
            } else if name == "type" {
                let type = try container.decode(String.self, forKey: key)
                guard Self.types.contains(type) else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be one of \(Self.types.sorted().joined(separator: ", "))")
                }
                values.append(Field(name: name, value: type))
            } else if let limit = Self.strings[name] {
                let text = try container.decode(String.self, forKey: key)
                // Bytes, not characters: one grapheme can be hundreds of kilobytes of combining marks.
                guard text.utf8.count <= limit else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be at most \(limit) bytes of UTF-8")
                }
                // Clients load these: nothing but a web address (no `javascript:` or `data:`).
                guard !name.hasSuffix("Url") || WebURL.isValid(text) else {
                    throw DecodingError.dataCorruptedError(forKey: key, in: container, debugDescription: "must be an http or https URL")
                }
                values.append(Field(name: name, value: text))
            }
        }
    }

    /// Checks `content` against a node's configured limit.
    /// - Throws: `invalid_payload` naming the field and the limit.
    public func checkContent(atMost limit: Int) throws(RoomcastError) {
        if let content = values.first(where: { $0.name == "content" }), content.value.utf8.count > limit {
            throw RoomcastError(.invalidPayload, "content: must be at most \(limit) bytes of UTF-8")
        }
    }

    /// Adds a default for a field the client left out.
    mutating func setDefault(_ name: String, _ value: String) {
        if !values.contains(where: { $0.name == name }) { values.append(Field(name: name, value: value)) }
    }

    /// Every mutable field: what `update` may change.
    static var mutable: Set<String> { Set(numbers.keys).union(strings.keys) }

    struct FieldKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

/// The `element` of `element:create` and the body of `POST .../elements`: a new element's fields.
public struct ElementDraft: Decodable, Sendable, Hashable {
    public private(set) var fields: ElementFields

    public init(from decoder: any Decoder) throws {
        fields = try ElementFields(from: decoder, allowed: ElementFields.mutable.union(["type"]))
        let present = Set(fields.names)
        for name in ElementFields.required where !present.contains(name) {
            throw DecodingError.keyNotFound(ElementFields.FieldKey(stringValue: name)!, .init(codingPath: decoder.codingPath, debugDescription: "required"))
        }
        fields.setDefault("rotation", "0.0")
        fields.setDefault("scaleX", "1.0")
        fields.setDefault("scaleY", "1.0")
    }

    /// The element's type (`note`, `photo`, …): required, and checked against ``ElementFields/types``.
    public var type: String { fields.values.first { $0.name == "type" }?.value ?? "" }
}

/// The `updates` of `element:update` and the body of `PATCH .../elements/:id`.
public struct ElementChanges: Decodable, Sendable, Hashable {
    public private(set) var fields: ElementFields

    public init(from decoder: any Decoder) throws {
        fields = try ElementFields(from: decoder, allowed: ElementFields.mutable)
        guard !fields.values.isEmpty else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no field to change"))
        }
    }
}
