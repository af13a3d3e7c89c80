import Foundation
import StreamKitHTTP
import StreamKitHTTPClient

/// What a task downloads: an HLS stream or a DASH presentation into a package, a progressive
/// file (mp4, mp3, anything that is not HLS or DASH) over several range connections, or a live
/// RTMP stream recorded for a while.
public enum DownloadKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// An HLS stream, kept as a local HLS package.
    case hls
    /// A DASH presentation (an MPD), kept as a local package like HLS, with its `manifest.mpd`.
    /// The engine tells the two apart by content: this kind is what the task is called.
    case dash
    /// One file over HTTP(S).
    case file
    /// A live stream (`rtmp://`, `rtmps://`) recorded to FLV, and an HLS package if asked, for
    /// ``LiveRecordingSettings/duration`` seconds, by the manager's ``LiveRecorder``.
    case rtmp

    /// Whether the task downloads a streaming presentation into a package (HLS or DASH).
    public var isPackage: Bool { self == .hls || self == .dash }
}

/// Whether the item is video or audio, for lists and players.
public enum DownloadFileType: String, Hashable, Sendable, Codable, CaseIterable {
    /// A video (the default).
    case video
    /// Audio only.
    case audio
}

/// What to add to a ``DownloadManager``.
public struct DownloadRequest: Hashable, Sendable {
    /// The http or https URL.
    public var url: String
    /// HLS or a file.
    public var kind: DownloadKind
    /// For HLS: which variant and renditions.
    public var selection: HLSSelection
    /// For HLS: store AES-128 segments decrypted.
    public var decrypt: Bool
    /// Video or audio.
    public var fileType: DownloadFileType
    /// A title for lists (default: the URL's last path component).
    public var title: String?
    /// A cover image URL.
    public var thumbnailURL: String?
    /// For a file: range connections (default 4); for HLS: transfers at once (default 8).
    public var connections: Int?
    /// Headers sent with every request of the task.
    public var headers: HTTPHeaders
    /// Where to store the task instead of its own folder in the download directory: the file (a
    /// file task) or the package folder (HLS), as `streamkit download -o` chooses. Such a place
    /// is the user's: removing the task deletes only what the task wrote there.
    public var location: String?
    /// For HLS: once the package is complete, write its main rendition as this one file (`.ts`
    /// for transport stream segments, `.mp4` for fragmented MP4), the post-processing step whose
    /// progress ``DownloadTaskInfo/postProcessingProgress`` reports. Like ``location``, the file
    /// is the user's: removing the task leaves it.
    public var exportPath: String?
    /// For HLS: keys given by the user (`--key`, `--key-file`, `--iv`). Secrets: the manager keeps
    /// them only in the task's secrets file, never in the index or a posted request.
    public var userKeys = HLSUserKeys()
    /// For a recording (``DownloadKind/rtmp``): how long and how; required for that kind.
    public var recording: LiveRecordingSettings?
    /// For HLS: once the package is complete, merge each WebVTT subtitle rendition into one file
    /// of this format beside its folder (``PackageSubtitles``), as `download --subs-format` does.
    public var subtitleFormat: SubtitleFormat?
    /// For DASH: download Representations under DRM (ContentProtection) as they are, rather than
    /// fail the task, as `download --keep-encrypted` does.
    public var keepEncrypted = false

    /// Creates a request.
    public init(
        url: String, kind: DownloadKind, selection: HLSSelection = HLSSelection(), decrypt: Bool = false,
        fileType: DownloadFileType = .video, title: String? = nil, thumbnailURL: String? = nil,
        connections: Int? = nil, headers: HTTPHeaders = [:], location: String? = nil, exportPath: String? = nil
    ) {
        self.url = url
        self.kind = kind
        self.selection = selection
        self.decrypt = decrypt
        self.fileType = fileType
        self.title = title
        self.thumbnailURL = thumbnailURL
        self.connections = connections
        self.headers = headers
        self.location = location
        self.exportPath = exportPath
    }

    /// The task id: 16 hexadecimal digits, the same for the same source, kind, selection,
    /// ``location`` and salt (for HLS in the download directory, the package id of
    /// ``HLSDownloadJob/packageID(source:selection:decrypt:salt:)``); a recording's id also
    /// depends on the time it is added, so that the same stream can be recorded again.
    ///
    /// - Parameters:
    ///   - salt: The manager directory's (``DownloadManager/idSalt``).
    ///   - now: When the task is added (recordings only).
    public func taskID(salt: String, now: Date = Date()) -> String {
        let place = location.map { "\nat\n" + $0 } ?? ""
        switch kind {
        case .rtmp:
            return HLSDownloadJob.packageID(
                source: "rtmp\n" + url + "\n" + String(now.timeIntervalSince1970), selection: HLSSelection(),
                decrypt: false, salt: salt)
        case .hls, .dash:
            return HLSDownloadJob.packageID(source: url + place, selection: selection, decrypt: decrypt, salt: salt)
        case .file:
            return HLSDownloadJob.packageID(
                source: "file\n" + url + place, selection: HLSSelection(), decrypt: false, salt: salt)
        }
    }
}

/// One task as the index holds it.
public struct DownloadTaskInfo: Hashable, Sendable, Codable {
    /// The task id (16 hex digits).
    public var id: String
    /// The position in the queue: tasks run in this order.
    public var queueID: Int64
    /// The source URL.
    public var url: String
    /// HLS or a file.
    public var kind: DownloadKind
    /// For HLS, the selection words (`best`, `auto`, `all`); `nil` for a file.
    public var selection: HLSSelection?
    /// For HLS, whether segments are stored decrypted.
    public var decrypt: Bool
    /// Video or audio.
    public var fileType: DownloadFileType
    /// The title.
    public var title: String
    /// The cover image URL.
    public var thumbnailURL: String?
    /// The state.
    public var state: DownloadState
    /// Done, 0...1.
    public var progress: Double
    /// Bytes in place.
    public var bytesDone: Int64
    /// Bytes expected in all, when known (estimated for HLS until every segment is in).
    public var bytesExpected: Int64?
    /// The current receive speed, bytes a second (0 when not running).
    public var bytesPerSecond: Double
    /// Post-processing done, 0...1: 1 once the output is final (see ``DownloadEvent/postProcessing(id:fraction:)``).
    public var postProcessingProgress: Double
    /// Why the task last failed, in words naming the URL, status or file; `nil` after a success.
    public var lastError: String?
    /// When it was added.
    public var createdAt: Date
    /// When it succeeded.
    public var finishedAt: Date?
    /// Where it is stored: the HLS package folder, or the file.
    public var location: String
    /// Range connections or transfers at once.
    public var connections: Int
    /// Headers sent with every request, `Name: value`; a credential's value (``TaskSecrets``) reads
    /// `<hidden>`: it is kept in the task's secrets file, not in the index.
    public var headers: [String]
    /// For HLS, the file the package is exported to once complete (``DownloadRequest/exportPath``).
    public var exportPath: String? = nil
    /// For a recording (``DownloadKind/rtmp``): its duration, idle timeout and HLS output.
    public var recording: LiveRecordingSettings? = nil
    /// For a recording: the seconds of media recorded so far, saved with the progress (the
    /// checkpoint a resumed run counts from until its files say more).
    public var recordedSeconds: Double? = nil
    /// For HLS, the format subtitle renditions are merged into once complete
    /// (``DownloadRequest/subtitleFormat``).
    public var subtitleFormat: SubtitleFormat? = nil
    /// For DASH, whether DRM-protected Representations are kept encrypted
    /// (``DownloadRequest/keepEncrypted``).
    public var keepEncrypted = false

    /// For HLS tasks, the job that downloads the package.
    func hlsJob(
        retry: HTTPClientRetryPolicy, idSalt: String, headers: HTTPHeaders, userKeys: HLSUserKeys = HLSUserKeys()
    ) -> HLSDownloadJob {
        var job = HLSDownloadJob(
            source: url, selection: selection ?? HLSSelection(),
            options: HLSDownloadOptions(
                connections: connections, decrypt: decrypt, headers: headers, retry: retry,
                progressInterval: .milliseconds(100)),
            packageDirectory: URL(fileURLWithPath: location, isDirectory: true))
        job.idSalt = idSalt
        job.options.userKeys = userKeys
        job.options.keepEncrypted = keepEncrypted
        // A task not given a title is named after its URL's file: the package records only a
        // title the user chose, and the library names the rest from the source.
        if title != DownloadManager.fileName(fromURL: url) { job.title = title }
        return job
    }

    /// Whether the task keeps its data in a folder of its own, made by the manager (named by the
    /// task id), which it may empty and delete; `false` for a place the user chose
    /// (``DownloadRequest/location``).
    var ownsFolder: Bool {
        // Path components by hand: URL's parsing cost most of opening a queue of ten thousand.
        var components = location.split(separator: "/", omittingEmptySubsequences: true)
        if kind == .file { components = components.dropLast() }
        return components.last.map { $0 == id } ?? false
    }
}

/// A finished item that plays with no network.
public struct LocalDownloadItem: Hashable, Sendable {
    /// The task id.
    public var id: String
    /// The title.
    public var title: String
    /// Video or audio.
    public var fileType: DownloadFileType
    /// What to open: the package's `index.m3u8`, or the file.
    public var playableFile: URL
    /// Bytes on disk.
    public var byteCount: Int64
}
