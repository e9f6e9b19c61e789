import NIOCore

/// Writes Swift strings as JSON string literals straight into a `ByteBuffer`.
enum JSONEscaper {
    /// Writes `"…"` with `"`, `\` and every control character escaped, so the output is
    /// also safe to join with the 0x1E polling separator.
    static func writeQuoted(_ string: String, into buffer: inout ByteBuffer) {
        var string = string
        buffer.writeInteger(UInt8(ascii: "\""))
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                // Copy unescaped runs in one go; most strings have no escapes at all.
                buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart..<index])))
                writeEscape(for: byte, into: &buffer)
                runStart = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[runStart..<utf8.count])))
        }
        buffer.writeInteger(UInt8(ascii: "\""))
    }

    private static func writeEscape(for byte: UInt8, into buffer: inout ByteBuffer) {
        let short: UInt8? =
            switch byte {
            case UInt8(ascii: "\""): UInt8(ascii: "\"")
            case UInt8(ascii: "\\"): UInt8(ascii: "\\")
            case 0x08: UInt8(ascii: "b")
            case 0x09: UInt8(ascii: "t")
            case 0x0A: UInt8(ascii: "n")
            case 0x0C: UInt8(ascii: "f")
            case 0x0D: UInt8(ascii: "r")
            default: nil
            }
        if let short {
            buffer.writeMultipleIntegers(UInt8(ascii: "\\"), short)
        } else {
            buffer.writeMultipleIntegers(
                UInt8(ascii: "\\"),
                UInt8(ascii: "u"),
                UInt8(ascii: "0"),
                UInt8(ascii: "0"),
                HexDigit.ascii(byte >> 4),
                HexDigit.ascii(byte & 0x0F)
            )
        }
    }
}
