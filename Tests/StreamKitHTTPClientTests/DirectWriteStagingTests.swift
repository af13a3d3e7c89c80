import Foundation
import StreamKitTestSupport
import Testing

@testable import StreamKitHTTPClient

@Suite struct DirectWriteStagingTests {
    /// Consecutive pieces for one file are gathered and written at once; a gap, another file or
    /// a full buffer needs a write first.
    @Test func consecutivePiecesAreGatheredAndWrittenOnce() throws {
        let path = try TestRun.makeTemporaryDirectory("staging").appendingPathComponent("out.bin").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        #expect(descriptor >= 0)
        defer { close(descriptor) }
        var staging = DirectWriteStaging()
        defer { staging.deallocate() }
        let first = [UInt8](repeating: 1, count: 16 << 10)
        let second = [UInt8](repeating: 2, count: 16 << 10)
        first.withUnsafeBytes { bytes in
            #expect(staging.canAppend(bytes, descriptor: descriptor, offset: 100))
            staging.append(bytes, descriptor: descriptor, offset: 100)
        }
        second.withUnsafeBytes { bytes in
            // Not where the gathered bytes end, nor another file: refused.
            #expect(!staging.canAppend(bytes, descriptor: descriptor, offset: 100 + (16 << 10) + 1))
            #expect(!staging.canAppend(bytes, descriptor: descriptor + 1, offset: 100 + (16 << 10)))
            #expect(staging.canAppend(bytes, descriptor: descriptor, offset: 100 + (16 << 10)))
            staging.append(bytes, descriptor: descriptor, offset: 100 + (16 << 10))
        }
        // Nothing is in the file until the write.
        #expect(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int == 0)
        #expect(try staging.write() == 32 << 10)
        #expect(try staging.write() == 0)
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written == [UInt8](repeating: 0, count: 100) + first + second)
        // A piece larger than what is left of the buffer is refused.
        let large = [UInt8](repeating: 3, count: DirectWriteStaging.capacity + 1)
        large.withUnsafeBytes { bytes in
            #expect(!staging.canAppend(bytes, descriptor: descriptor, offset: 0))
        }
    }
}
