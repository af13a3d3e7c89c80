/// The attributes EXT-X-STREAM-INF and EXT-X-I-FRAME-STREAM-INF share: the I-frame tag defines every attribute of
/// the variant tag but FRAME-RATE, AUDIO, SUBTITLES and CLOSED-CAPTIONS (RFC 8216bis §4.4.6.3). The parser and the
/// writer read and write them once for both.
protocol SharedVariantAttributes {
    var bandwidth: Int { get set }
    var averageBandwidth: Int? { get set }
    var score: Double? { get set }
    var codecs: String? { get set }
    var supplementalCodecs: String? { get set }
    var resolution: Resolution? { get set }
    var hdcpLevel: String? { get set }
    var allowedCPC: String? { get set }
    var videoRange: String? { get set }
    var requiredVideoLayout: String? { get set }
    var stableVariantID: String? { get set }
    var video: String? { get set }
    var pathwayID: String? { get set }
    var otherAttributes: [Attribute] { get }
}

extension VariantStream: SharedVariantAttributes {}
extension IFrameVariantStream: SharedVariantAttributes {}

/// The attributes only EXT-X-STREAM-INF defines; empty for an I-frame variant.
struct StreamInfOnlyAttributes {
    var frameRate: Double?
    var audio: String?
    var subtitles: String?
    var closedCaptions: ClosedCaptionsReference?
}

extension VariantStream {
    /// Its attributes that EXT-X-I-FRAME-STREAM-INF does not define.
    var streamInfOnly: StreamInfOnlyAttributes {
        get {
            StreamInfOnlyAttributes(
                frameRate: frameRate, audio: audio, subtitles: subtitles, closedCaptions: closedCaptions)
        }
        set {
            frameRate = newValue.frameRate
            audio = newValue.audio
            subtitles = newValue.subtitles
            closedCaptions = newValue.closedCaptions
        }
    }
}
