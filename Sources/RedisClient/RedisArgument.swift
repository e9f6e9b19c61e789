public import NIOCore

/// A value that can be sent as one RESP bulk-string argument.
public protocol RedisArgument: Sendable {
    /// Appends this argument as `$<len>\r\n<bytes>\r\n`.
    func writeRESPBulk(into buffer: inout ByteBuffer)
}

extension ByteBuffer {
    /// Writes `<prefix><count>\r\n`, the header of a RESP array or bulk string.
    @inlinable
    mutating func writeRESPLength(_ prefix: UInt8, _ count: Int) {
        writeInteger(prefix)
        writeDecimal(count)
        writeStaticString("\r\n")
    }

    /// Writes an integer's decimal digits without building a `String` first.
    @inlinable
    mutating func writeDecimal(_ value: Int) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 21) { digits in
            var magnitude = value.magnitude
            var index = digits.count
            repeat {
                index -= 1
                digits[index] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                index -= 1
                digits[index] = UInt8(ascii: "-")
            }
            writeBytes(UnsafeBufferPointer(rebasing: digits[index...]))
        }
    }

    @inlinable
    mutating func writeRESPBulk(bytes: some Collection<UInt8>) {
        writeRESPLength(UInt8(ascii: "$"), bytes.count)
        writeBytes(bytes)
        writeStaticString("\r\n")
    }
}

extension String: RedisArgument {
    public func writeRESPBulk(into buffer: inout ByteBuffer) {
        buffer.writeRESPBulk(bytes: utf8)
    }
}

extension Substring: RedisArgument {
    public func writeRESPBulk(into buffer: inout ByteBuffer) {
        buffer.writeRESPBulk(bytes: utf8)
    }
}

extension ByteBuffer: RedisArgument {
    public func writeRESPBulk(into buffer: inout ByteBuffer) {
        buffer.writeRESPLength(UInt8(ascii: "$"), readableBytes)
        buffer.writeImmutableBuffer(self)
        buffer.writeStaticString("\r\n")
    }
}

extension Array: RedisArgument where Element == UInt8 {
    public func writeRESPBulk(into buffer: inout ByteBuffer) {
        buffer.writeRESPBulk(bytes: self)
    }
}

extension Int: RedisArgument {
    public func writeRESPBulk(into buffer: inout ByteBuffer) {
        // The length prefix needs the digit count, so count digits before writing them.
        var digits = self < 0 ? 2 : 1
        var rest = magnitude / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        buffer.writeRESPLength(UInt8(ascii: "$"), digits)
        buffer.writeDecimal(self)
        buffer.writeStaticString("\r\n")
    }
}

extension Int64: RedisArgument {
    public func writeRESPBulk(into buffer: inout ByteBuffer) {
        Int(self).writeRESPBulk(into: &buffer)
    }
}

extension Double: RedisArgument {
    public func writeRESPBulk(into buffer: inout ByteBuffer) {
        // Redis parses `inf`/`-inf`; Swift prints them as `inf`/`-inf` too.
        String(self).writeRESPBulk(into: &buffer)
    }
}
