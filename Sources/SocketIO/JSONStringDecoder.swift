/// Turns a JSON string token that `JSONScanner` already accepted into a Swift `String`.
///
/// It still checks every index it reads, so a token that did not come from the scanner
/// yields nil rather than trapping.
enum JSONStringDecoder {
    /// `token` must include the surrounding quotes.
    static func decode(_ token: UnsafeRawBufferPointer) -> String? {
        guard token.count >= 2,
            token[0] == UInt8(ascii: "\""),
            token[token.count - 1] == UInt8(ascii: "\"")
        else { return nil }
        let body = UnsafeRawBufferPointer(rebasing: token[1..<(token.count - 1)])
        guard body.contains(UInt8(ascii: "\\")) else {
            return UTF8Validation.isValid(body) ? String(decoding: body, as: UTF8.self) : nil
        }

        var utf8: [UInt8] = []
        utf8.reserveCapacity(body.count)
        var index = 0
        while index < body.count {
            let byte = body[index]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                index += 1
                continue
            }
            guard index + 1 < body.count else { return nil }
            let escaped = body[index + 1]
            index += 2
            switch escaped {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hexQuad(body, at: index) else { return nil }
                index += 4
                var scalarValue = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    guard index + 1 < body.count,
                        body[index] == UInt8(ascii: "\\"),
                        body[index + 1] == UInt8(ascii: "u"),
                        let low = hexQuad(body, at: index + 2),
                        (0xDC00...0xDFFF).contains(low)
                    else { return nil }
                    index += 6
                    scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(scalarValue), let encoded = UTF8.encode(scalar) else {
                    return nil
                }
                utf8.append(contentsOf: encoded)
            default:
                return nil
            }
        }
        return utf8.withUnsafeBytes { decoded in
            UTF8Validation.isValid(decoded) ? String(decoding: decoded, as: UTF8.self) : nil
        }
    }

    private static func hexQuad(_ bytes: UnsafeRawBufferPointer, at index: Int) -> UInt16? {
        guard index >= 0, bytes.count - index >= 4 else { return nil }
        var value: UInt16 = 0
        for offset in 0..<4 {
            guard let digit = HexDigit.value(of: bytes[index + offset]) else { return nil }
            value = value << 4 | UInt16(digit)
        }
        return value
    }
}
