import StreamKitCore
import Testing

@Suite struct ByteBufferTests {
    @Test func integersInBothByteOrders() {
        var buffer = ByteBuffer()
        buffer.writeInteger(UInt16(0x0102))
        buffer.writeInteger(UInt32(0x0304_0506), endianness: .little)
        buffer.writeUInt24(0x07_0809)
        buffer.writeInteger(Int8(-2))
        buffer.writeInteger(UInt64.max - 1)
        #expect(Array(buffer.readableBytesView.prefix(10)) == [1, 2, 6, 5, 4, 3, 7, 8, 9, 0xFE])
        #expect(buffer.readInteger(as: UInt16.self) == 0x0102)
        #expect(buffer.readInteger(endianness: .little, as: UInt32.self) == 0x0304_0506)
        #expect(buffer.readUInt24() == 0x07_0809)
        #expect(buffer.readInteger(as: Int8.self) == -2)
        #expect(buffer.readInteger(as: UInt64.self) == UInt64.max - 1)
        #expect(buffer.readableBytes == 0)
    }

    @Test func shortReadsReturnNilAndLeaveTheCursor() {
        var buffer: ByteBuffer = [1, 2, 3]
        #expect(buffer.readInteger(as: UInt32.self) == nil)
        #expect(buffer.readBytes(length: 4) == nil)
        #expect(buffer.readUInt24(endianness: .little) == 0x03_0201)
        #expect(buffer.readInteger(as: UInt8.self) == nil)
        #expect(buffer.readBytes(length: 0) == [])
        #expect(buffer.moveReaderIndex(forwardBy: 1) == false)
    }

    @Test func peekingDoesNotConsume() {
        var buffer: ByteBuffer = [0xAA, 0xBB, 0xCC, 0xDD]
        #expect(buffer.getInteger(at: 1, as: UInt16.self) == 0xBBCC)
        #expect(buffer.getByte(at: 3) == 0xDD && buffer.getByte(at: 4) == nil)
        #expect(buffer.getUInt24(at: 1) == 0xBB_CCDD)
        #expect(buffer.getUInt24(at: 2) == nil)
        #expect(buffer.readableBytes == 4)
        let mark = buffer.readerIndex
        _ = buffer.readBytes(length: 3)
        buffer.moveReaderIndex(to: mark)
        #expect(buffer.readString(length: 0) == "")
        #expect(buffer.readBytes(length: 4) == [0xAA, 0xBB, 0xCC, 0xDD])
    }

    @Test func discardingReadBytesKeepsTheRest() {
        var buffer = ByteBuffer(bytes: 0..<10)
        _ = buffer.readBytes(length: 6)
        buffer.discardReadBytes()
        #expect(buffer.readerIndex == 0)
        #expect(Array(buffer.readableBytesView) == [6, 7, 8, 9])
        buffer.writeString("hi")
        #expect(buffer.readableBytes == 6)
        // Equality looks at readable bytes only.
        var other = ByteBuffer(bytes: [0, 6, 7, 8, 9] + Array("hi".utf8))
        _ = other.readInteger(as: UInt8.self)
        #expect(buffer == other)
    }
}

@Suite struct HexTests {
    @Test func roundTrip() {
        #expect(Hex.encode([0x00, 0x0F, 0xA5, 0xFF]) == "000fa5ff")
        #expect(Hex.decode("000FA5ff") == [0x00, 0x0F, 0xA5, 0xFF])
        #expect(Hex.decode("0x0102") == [1, 2])
        #expect(Hex.decode("0X") == [])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }
}
