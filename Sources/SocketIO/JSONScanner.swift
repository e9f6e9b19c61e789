/// A strict RFC 8259 validator that records value boundaries instead of building values.
///
/// Payloads are forwarded as raw bytes and decoded once by the application, so the codec
/// only needs to know that they are well-formed and where the top-level elements start
/// and end. Nesting is tracked with an explicit stack rather than recursion so that a
/// large `maxDepth` cannot exhaust the thread's stack.
struct JSONScanner {
    static let defaultMaxDepth = 64

    private let bytes: UnsafeRawBufferPointer
    private let maxDepth: Int
    private var index: Int = 0

    private init(bytes: UnsafeRawBufferPointer, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Validates that `bytes[start...]` holds exactly one JSON value, optionally surrounded by
    /// whitespace. Reported ranges and error offsets index into `bytes`, not from `start`.
    static func scan(
        _ bytes: UnsafeRawBufferPointer,
        startingAt start: Int = 0,
        maxDepth: Int = defaultMaxDepth,
        collectElements: Bool = false,
        collectMembers: Bool = false
    ) throws(JSONScanError) -> JSONScanResult {
        var scanner = JSONScanner(bytes: bytes, maxDepth: maxDepth)
        scanner.index = max(0, start)
        return try scanner.scanDocument(collectElements: collectElements, collectMembers: collectMembers)
    }

    private mutating func scanDocument(collectElements: Bool, collectMembers: Bool) throws(JSONScanError) -> JSONScanResult {
        self.skipWhitespace()
        let start = self.index
        guard let first = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
        guard let kind = JSONValueKind(firstByte: first) else {
            throw JSONScanError(.unexpectedByte, at: self.index)
        }
        let collect = (collectElements && kind == .array) || (collectMembers && kind == .object)

        // `true` marks an object, `false` an array.
        var containers: [Bool] = []
        var elements: [Range<Int>] = []
        var memberNames: [Range<Int>] = []
        var elementStart = start

        value: while true {
            guard let byte = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
            if collect && containers.count == 1 { elementStart = self.index }

            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = byte == UInt8(ascii: "{")
                guard containers.count < self.maxDepth else { throw JSONScanError(.tooDeep, at: self.index) }
                containers.append(isObject)
                self.index += 1
                self.skipWhitespace()
                if self.peek() == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    self.index += 1
                    containers.removeLast()
                } else {
                    if isObject {
                        let name = try self.scanMemberName()
                        if collect && containers.count == 1 { memberNames.append(name) }
                    }
                    continue value
                }
            case UInt8(ascii: "\""):
                try self.scanString()
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                try self.scanNumber()
            case UInt8(ascii: "t"):
                try self.scanLiteral("true")
            case UInt8(ascii: "f"):
                try self.scanLiteral("false")
            case UInt8(ascii: "n"):
                try self.scanLiteral("null")
            default:
                throw JSONScanError(.unexpectedByte, at: self.index)
            }

            // Each pass of this loop follows the completion of one value.
            while let isObject = containers.last {
                if collect && containers.count == 1 { elements.append(elementStart..<self.index) }
                self.skipWhitespace()
                guard let next = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
                if next == UInt8(ascii: ",") {
                    self.index += 1
                    self.skipWhitespace()
                    if isObject {
                        let name = try self.scanMemberName()
                        if collect && containers.count == 1 { memberNames.append(name) }
                    }
                    continue value
                }
                guard next == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw JSONScanError(.unexpectedByte, at: self.index)
                }
                self.index += 1
                containers.removeLast()
            }
            break value
        }

        let end = self.index
        self.skipWhitespace()
        guard self.index == self.bytes.count else { throw JSONScanError(.trailingData, at: self.index) }
        return JSONScanResult(kind: kind, range: start..<end, elements: elements, memberNames: memberNames)
    }

    private func peek() -> UInt8? {
        self.index < self.bytes.count ? self.bytes[self.index] : nil
    }

    private mutating func skipWhitespace() {
        while let byte = self.peek(),
            byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
        {
            self.index += 1
        }
    }

    /// Consumes `"name"` `:` and the whitespace before the member's value.
    /// - Returns: where the name's string token (quotes included) is.
    private mutating func scanMemberName() throws(JSONScanError) -> Range<Int> {
        guard let byte = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
        guard byte == UInt8(ascii: "\"") else { throw JSONScanError(.unexpectedByte, at: self.index) }
        let nameStart = self.index
        try self.scanString()
        let name = nameStart..<self.index
        self.skipWhitespace()
        guard let colon = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
        guard colon == UInt8(ascii: ":") else { throw JSONScanError(.unexpectedByte, at: self.index) }
        self.index += 1
        self.skipWhitespace()
        return name
    }

    private mutating func scanLiteral(_ literal: StaticString) throws(JSONScanError) {
        let count = literal.utf8CodeUnitCount
        let expected = UnsafeRawBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count {
            guard let byte = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
            guard byte == expected[offset] else { throw JSONScanError(.unexpectedByte, at: self.index) }
            self.index += 1
        }
    }

    private mutating func scanDigits() -> Int {
        let start = self.index
        while let byte = self.peek(), byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            self.index += 1
        }
        return self.index - start
    }

    private mutating func scanNumber() throws(JSONScanError) {
        let start = self.index
        if self.peek() == UInt8(ascii: "-") { self.index += 1 }
        switch self.peek() {
        case UInt8(ascii: "0"):
            // A leading zero stands alone; "01" is left for the caller to reject as garbage.
            self.index += 1
        case .some(UInt8(ascii: "1")...UInt8(ascii: "9")):
            _ = self.scanDigits()
        default:
            throw JSONScanError(.invalidNumber, at: start)
        }
        if self.peek() == UInt8(ascii: ".") {
            self.index += 1
            guard self.scanDigits() > 0 else { throw JSONScanError(.invalidNumber, at: start) }
        }
        if self.peek() == UInt8(ascii: "e") || self.peek() == UInt8(ascii: "E") {
            self.index += 1
            if self.peek() == UInt8(ascii: "+") || self.peek() == UInt8(ascii: "-") { self.index += 1 }
            guard self.scanDigits() > 0 else { throw JSONScanError(.invalidNumber, at: start) }
        }
    }

    private mutating func scanString() throws(JSONScanError) {
        self.index += 1
        while let byte = self.peek() {
            switch byte {
            case UInt8(ascii: "\""):
                self.index += 1
                return
            case UInt8(ascii: "\\"):
                try self.scanEscape()
            case 0x00..<0x20:
                throw JSONScanError(.controlCharacter, at: self.index)
            case 0x20..<0x80:
                self.index += 1
            default:
                guard let length = UTF8Validation.sequenceLength(self.bytes, at: self.index) else {
                    throw JSONScanError(.invalidUTF8, at: self.index)
                }
                self.index += length
            }
        }
        throw JSONScanError(.unexpectedEnd, at: self.index)
    }

    private mutating func scanEscape() throws(JSONScanError) {
        let start = self.index
        self.index += 1
        guard let byte = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"),
            UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
            self.index += 1
        case UInt8(ascii: "u"):
            self.index += 1
            let unit = try self.scanHexQuad(escapeStart: start)
            switch unit {
            case 0xD800...0xDBFF:
                // A high surrogate is only meaningful with a low surrogate escape right after it.
                guard self.peek() == UInt8(ascii: "\\") else {
                    throw JSONScanError(.unpairedSurrogate, at: start)
                }
                let lowStart = self.index
                self.index += 1
                guard self.peek() == UInt8(ascii: "u") else {
                    throw JSONScanError(.unpairedSurrogate, at: start)
                }
                self.index += 1
                let low = try self.scanHexQuad(escapeStart: lowStart)
                guard (0xDC00...0xDFFF).contains(low) else {
                    throw JSONScanError(.unpairedSurrogate, at: start)
                }
            case 0xDC00...0xDFFF:
                throw JSONScanError(.unpairedSurrogate, at: start)
            default:
                break
            }
        default:
            throw JSONScanError(.invalidEscape, at: start)
        }
    }

    private mutating func scanHexQuad(escapeStart: Int) throws(JSONScanError) -> UInt16 {
        var value: UInt16 = 0
        for _ in 0..<4 {
            guard let byte = self.peek() else { throw JSONScanError(.unexpectedEnd, at: self.index) }
            guard let digit = HexDigit.value(of: byte) else {
                throw JSONScanError(.invalidEscape, at: escapeStart)
            }
            value = value << 4 | UInt16(digit)
            self.index += 1
        }
        return value
    }
}
