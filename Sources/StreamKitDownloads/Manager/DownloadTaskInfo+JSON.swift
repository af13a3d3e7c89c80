import Foundation
import StreamKitCore

extension DownloadTaskInfo {
    /// How `queue list --json` and the other task lines write a task through `Encodable`: keys
    /// sorted, dates in ISO 8601. ``writeJSON(to:)`` writes the same bytes faster.
    public static let jsonOptions = JSONWriter.EncodingOptions(sortedKeys: true, iso8601Dates: true)

    /// Writes the task as one JSON object, byte for byte as `JSONEncoder` with `.sortedKeys` and
    /// `.iso8601` dates writes its `Codable` form (absent optionals left out), member by member:
    /// through `Encodable` a queue of ten thousand tasks took most of `queue list --json`'s time.
    /// The members are in the order of their keys' bytes; a test holds this to the `Codable` form.
    public func writeJSON(to writer: inout JSONWriter) {
        writer.beginObject()
        writer.field("bytesDone", bytesDone)
        if let bytesExpected { writer.field("bytesExpected", bytesExpected) }
        writer.field("bytesPerSecond", bytesPerSecond)
        writer.field("connections", connections)
        writer.key("createdAt")
        writer.date(createdAt)
        writer.field("decrypt", decrypt)
        if let exportPath { writer.field("exportPath", exportPath) }
        writer.field("fileType", fileType.rawValue)
        if let finishedAt {
            writer.key("finishedAt")
            writer.date(finishedAt)
        }
        writer.key("headers")
        writer.beginArray()
        for header in headers { writer.string(header) }
        writer.endArray()
        writer.field("id", id)
        writer.field("keepEncrypted", keepEncrypted)
        writer.field("kind", kind.rawValue)
        if let lastError { writer.field("lastError", lastError) }
        writer.field("location", location)
        writer.field("postProcessingProgress", postProcessingProgress)
        writer.field("progress", progress)
        writer.field("queueID", queueID)
        if let recordedSeconds { writer.field("recordedSeconds", recordedSeconds) }
        if let recording {
            writer.key("recording")
            // Rare (recordings only) and small: through `Encodable`.
            try? writer.encode(recording, options: Self.jsonOptions)
        }
        if let selection {
            writer.key("selection")
            try? writer.encode(selection, options: Self.jsonOptions)
        }
        writer.field("state", state.rawValue)
        if let subtitleFormat { writer.field("subtitleFormat", subtitleFormat.rawValue) }
        if let thumbnailURL { writer.field("thumbnailURL", thumbnailURL) }
        writer.field("title", title)
        writer.field("url", url)
        writer.endObject()
    }
}
