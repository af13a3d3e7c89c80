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
}
