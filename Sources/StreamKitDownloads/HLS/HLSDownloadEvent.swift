import Foundation
import StreamKitHLS
import StreamKitHTTP

/// How far an HLS download has come.
public struct HLSDownloadProgress: Hashable, Sendable {
    /// Segments, maps and keys in place (a segment inside a byte-range file counts once its bytes are).
    public var filesDone: Int
    /// Segments, maps and keys planned (grows while a live playlist is recorded).
    public var filesTotal: Int
    /// Segments skipped with `--skip-broken`.
    public var filesSkipped: Int = 0
    /// Bytes of the package fetched so far, counting what earlier runs fetched.
    public var bytesDone: Int64
    /// Bytes received in this run.
    public var bytesTransferred: Int64
    /// The package's estimated size: exact for files done and byte ranges, otherwise bytes a second
    /// of media seen so far (or the variant's BANDWIDTH before any) times the seconds left.
    public var estimatedTotalBytes: Int64?
    /// The smoothed receive speed, bytes a second.
    public var bytesPerSecond: Double?
    /// Seconds of media recorded, for a live playlist.
    public var recordedSeconds: Double?
    /// The live recording's limit, when one was set.
    public var recordingLimitSeconds: Double?

    /// The fraction done, 0...1: by bytes when the total is estimated, else by files.
    public var fractionCompleted: Double? {
        if let total = estimatedTotalBytes, total > 0 { return min(1, Double(bytesDone) / Double(total)) }
        guard filesTotal > 0 else { return nil }
        return Double(filesDone + filesSkipped) / Double(filesTotal)
    }

    /// Seconds left at the current speed, when the total and the speed are known (VOD only).
    public var estimatedSecondsRemaining: Double? {
        guard recordedSeconds == nil, let total = estimatedTotalBytes, let speed = bytesPerSecond, speed > 0 else {
            return nil
        }
        return Double(max(0, total - bytesDone)) / speed
    }
}

/// What an ``HLSDownload`` reports while it runs.
public enum HLSDownloadEvent: Hashable, Sendable {
    /// The package is planned: renditions chosen, files listed (some already done when resuming).
    case planned(HLSPackageSummary)
    /// Progress, at most once per ``HLSDownloadOptions/progressInterval``, and once at the end.
    case progress(HLSDownloadProgress)
    /// A segment failed after retries and was skipped (`--skip-broken`): it becomes an EXT-X-GAP.
    case skipped(path: String, url: String, reason: String)
    /// A playlist breaks RFC 8216bis in ways a lenient read goes past (docs/CLI.md, "How playlists are read"):
    /// reported once per playlist URL, the first time it is read with warnings.
    case playlistWarnings(url: String, warnings: [PlaylistDiagnostic])
    /// A key given by the user (``HLSUserKeys``) is for a key URI no playlist names (`uri`), or,
    /// when `uri` is `nil`, a key for every URI was given and the playlists name no key. Reported
    /// once planned (at the end for a live recording); the download goes on.
    case userKeyUnused(uri: String?)
    /// A live playlist was reloaded and gave new segments.
    case recorded(rendition: String, newSegments: Int, recordedSeconds: Double)
}

/// What a package holds, once planned.
public struct HLSPackageSummary: Hashable, Sendable {
    /// One rendition of the package.
    public struct Rendition: Hashable, Sendable {
        /// Its folder in the package.
        public var folder: String
        /// `main`, `mainAudioOnly`, `audio` or `subtitles`.
        public var role: String
        /// LANGUAGE, for alternative renditions.
        public var language: String?
        /// Segments listed.
        public var segments: Int
        /// Seconds listed.
        public var duration: Double
        /// Segments left out because their URI matches `--exclude-segments`.
        public var segmentsExcluded = 0
        /// Segments left out because they cover no `--section`.
        public var segmentsOutsideSections = 0
    }

    /// The package id.
    public var id: String
    /// The package folder.
    public var directory: URL
    /// The renditions, main first.
    public var renditions: [Rendition]
    /// Files planned (segments, maps, keys).
    public var files: Int
    /// Files already in place from an earlier run.
    public var filesAlreadyDone: Int
    /// Of those, files whose ETag the server confirmed before they were counted.
    public var filesVerified = 0
    /// Files an earlier run completed whose resource changed on the server since (another ETag):
    /// fetched again.
    public var filesChanged = 0
    /// Whether a live playlist is being recorded.
    public var live: Bool
}

/// A segment skipped with `--skip-broken`.
public struct HLSDownloadGap: Hashable, Sendable {
    /// The package file that is missing.
    public var path: String
    /// Its source URL.
    public var url: String
    /// Why it failed.
    public var reason: String
    /// The HTTP status of the last attempt, when there was one.
    public var status: HTTPStatus?
}

/// A finished HLS download.
public struct HLSDownloadResult: Hashable, Sendable {
    /// The package id.
    public var id: String
    /// The package folder.
    public var directory: URL
    /// The multivariant playlist players open: `directory/index.m3u8`.
    public var indexFile: URL
    /// `complete` or `completeWithGaps`.
    public var status: PackageStatus
    /// Segments skipped with `--skip-broken`.
    public var gaps: [HLSDownloadGap]
    /// Files in the package (segments, maps, keys).
    public var files: Int
    /// Files fetched in this run.
    public var filesFetched: Int
    /// Bytes of the package's files.
    public var bytes: Int64
    /// Bytes received in this run.
    public var bytesTransferred: Int64
    /// Seconds of media in the main rendition.
    public var duration: Double
    /// Whether the source was a live playlist that was recorded.
    public var live: Bool
    /// For an MPD source: the package's MPD, `directory/manifest.mpd` (over the same files as
    /// ``indexFile``).
    public var mpdFile: URL? = nil
}
