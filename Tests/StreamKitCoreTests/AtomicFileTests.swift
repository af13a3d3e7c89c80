import Foundation
import StreamKitCore
import StreamKitTestSupport
import Testing

@Suite struct AtomicFileTests {
    @Test func replacesTheFileWholeAndLeavesNoTemporary() throws {
        let directory = try TestRun.makeTemporaryDirectory("atomic")
        let path = directory.appendingPathComponent("record.json").path
        let temporary = path + ".tmp"
        try AtomicFile.write(Array("first".utf8), to: path, temporaryPath: temporary)
        try AtomicFile.write(Array("second, longer".utf8), to: path, temporaryPath: temporary)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "second, longer")
        try AtomicFile.write([UInt8](), to: path, temporaryPath: temporary)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["record.json"])
    }

    @Test func failuresNameTheCallAndTheFile() throws {
        let directory = try TestRun.makeTemporaryDirectory("atomic")
        let missing = directory.appendingPathComponent("no/such/folder/record.json").path
        #expect(throws: SystemError(code: ENOENT, operation: "open", subject: missing + ".tmp")) {
            try AtomicFile.write(Array("x".utf8), to: missing, temporaryPath: missing + ".tmp")
        }
        // A rename onto a directory fails after the write: the temporary file does not stay behind.
        let target = directory.appendingPathComponent("occupied")
        try FileManager.default.createDirectory(
            at: target.appendingPathComponent("inside"), withIntermediateDirectories: true)
        #expect(throws: SystemError.self) {
            try AtomicFile.write(Array("x".utf8), to: target.path, temporaryPath: target.path + ".tmp")
        }
        #expect(!FileManager.default.fileExists(atPath: target.path + ".tmp"))
    }

    /// Streamed chunk by chunk; a producer that fails leaves the old file in place and no temporary.
    @Test func streamedChunksReplaceTheFileUnlessTheProducerFails() throws {
        struct Refused: Error {}
        let directory = try TestRun.makeTemporaryDirectory("atomic")
        let path = directory.appendingPathComponent("manifest.json").path
        try AtomicFile.write(to: path, temporarySuffix: ".part") { emit in
            for index in 0..<1_000 { emit(Array("\(index),".utf8)) }
        }
        let whole = (0..<1_000).map { "\($0)," }.joined()
        #expect(try String(contentsOfFile: path, encoding: .utf8) == whole)
        #expect(throws: Refused.self) {
            try AtomicFile.write(to: path, temporarySuffix: ".part") { emit in
                emit(Array("half of a document".utf8))
                throw Refused()
            }
        }
        #expect(try String(contentsOfFile: path, encoding: .utf8) == whole)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["manifest.json"])
    }
}
