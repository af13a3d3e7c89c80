import StreamKitCore

/// StreamKitCore's box reading, failing as SAMPLE-AES does: a box that does not fit, or a field
/// cut short, is ``SampleAESError/Kind/notFragmentedMP4``.
extension MP4Box {
    /// The boxes that fill `range` of `bytes`, in order.
    ///
    /// - Throws: ``SampleAESError`` `notFragmentedMP4` when a box's size runs past the range or is
    ///   too small for its own header.
    public static func boxes(in bytes: [UInt8], _ range: Range<Int>) throws(SampleAESError) -> [MP4Box] {
        try boxes(in: bytes, range) { SampleAESError(.notFragmentedMP4, $0) }
    }

    /// The first child of `type` among the boxes of `range`.
    public static func first(
        _ type: UInt32, in bytes: [UInt8], _ range: Range<Int>
    ) throws(SampleAESError) -> MP4Box? {
        try boxes(in: bytes, range).first { $0.type == type }
    }
}

extension MP4Reader where Failure == SampleAESError {
    /// A reader of `range` of `bytes`, `what` naming it when it is cut short.
    init(_ bytes: [UInt8], _ range: Range<Int>, what: String) {
        self.init(bytes, range, what: what) { SampleAESError(.notFragmentedMP4, $0) }
    }
}
