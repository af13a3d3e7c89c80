import Foundation
import StreamKitDASH
import Testing

/// MPDs written by ffmpeg 5.1 (`-f dash`) for these tests: SegmentTemplate with a
/// SegmentTimeline (two video Representations, audio with uneven segments), with `$Number$` and
/// a duration, and one file with a SegmentList of byte ranges (`-single_file 1`).
enum FFmpegMPDs {
    static let timeline = """
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xmlns="urn:mpeg:dash:schema:mpd:2011"
          xmlns:xlink="http://www.w3.org/1999/xlink"
          xsi:schemaLocation="urn:mpeg:DASH:schema:MPD:2011 http://standards.iso.org/ittf/PubliclyAvailableStandards/MPEG-DASH_schema_files/DASH-MPD.xsd"
          profiles="urn:mpeg:dash:profile:isoff-live:2011"
          type="static"
          mediaPresentationDuration="PT6.0S"
          maxSegmentDuration="PT2.0S"
          minBufferTime="PT4.0S">
          <ProgramInformation>
          </ProgramInformation>
          <ServiceDescription id="0">
          </ServiceDescription>
          <Period id="0" start="PT0.0S">
            <AdaptationSet id="0" contentType="video" startWithSAP="1" segmentAlignment="true" bitstreamSwitching="true" frameRate="25/1" maxWidth="320" maxHeight="180" par="16:9">
              <Representation id="0" mimeType="video/mp4" codecs="avc1.f4000c" bandwidth="300000" width="320" height="180" sar="1:1">
                <SegmentTemplate timescale="12800" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1">
                  <SegmentTimeline>
                    <S t="0" d="25600" r="2" />
                  </SegmentTimeline>
                </SegmentTemplate>
              </Representation>
              <Representation id="1" mimeType="video/mp4" codecs="avc1.f4000b" bandwidth="150000" width="160" height="90" sar="1:1">
                <SegmentTemplate timescale="12800" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1">
                  <SegmentTimeline>
                    <S t="0" d="25600" r="2" />
                  </SegmentTimeline>
                </SegmentTemplate>
              </Representation>
            </AdaptationSet>
            <AdaptationSet id="1" contentType="audio" startWithSAP="1" segmentAlignment="true" bitstreamSwitching="true">
              <Representation id="2" mimeType="audio/mp4" codecs="mp4a.40.2" bandwidth="69000" audioSamplingRate="44100">
                <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="1" />
                <SegmentTemplate timescale="44100" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1">
                  <SegmentTimeline>
                    <S t="0" d="84992" />
                    <S d="88064" />
                    <S d="89088" />
                    <S d="2456" />
                  </SegmentTimeline>
                </SegmentTemplate>
              </Representation>
            </AdaptationSet>
          </Period>
        </MPD>
        """

    static let number = """
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xmlns="urn:mpeg:dash:schema:mpd:2011"
          xmlns:xlink="http://www.w3.org/1999/xlink"
          xsi:schemaLocation="urn:mpeg:DASH:schema:MPD:2011 http://standards.iso.org/ittf/PubliclyAvailableStandards/MPEG-DASH_schema_files/DASH-MPD.xsd"
          profiles="urn:mpeg:dash:profile:isoff-live:2011"
          type="static"
          mediaPresentationDuration="PT6.0S"
          maxSegmentDuration="PT2.0S"
          minBufferTime="PT4.0S">
          <ProgramInformation>
          </ProgramInformation>
          <ServiceDescription id="0">
          </ServiceDescription>
          <Period id="0" start="PT0.0S">
            <AdaptationSet id="0" contentType="video" startWithSAP="1" segmentAlignment="true" bitstreamSwitching="true" frameRate="25/1" maxWidth="320" maxHeight="180" par="16:9">
              <Representation id="0" mimeType="video/mp4" codecs="avc1.f4000c" bandwidth="49605" width="320" height="180" sar="1:1">
                <SegmentTemplate timescale="1000000" duration="2000000" initialization="init-stream$RepresentationID$.m4s" media="chunk-stream$RepresentationID$-$Number%05d$.m4s" startNumber="1">
                </SegmentTemplate>
              </Representation>
            </AdaptationSet>
          </Period>
        </MPD>
        """

    static let singleFile = """
        <?xml version="1.0" encoding="utf-8"?>
        <MPD xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
          xmlns="urn:mpeg:dash:schema:mpd:2011"
          xmlns:xlink="http://www.w3.org/1999/xlink"
          xsi:schemaLocation="urn:mpeg:DASH:schema:MPD:2011 http://standards.iso.org/ittf/PubliclyAvailableStandards/MPEG-DASH_schema_files/DASH-MPD.xsd"
          profiles="urn:mpeg:dash:profile:isoff-live:2011"
          type="static"
          mediaPresentationDuration="PT6.0S"
          maxSegmentDuration="PT2.0S"
          minBufferTime="PT4.0S">
          <ProgramInformation>
          </ProgramInformation>
          <ServiceDescription id="0">
          </ServiceDescription>
          <Period id="0" start="PT0.0S">
            <AdaptationSet id="0" contentType="video" startWithSAP="1" segmentAlignment="true" bitstreamSwitching="true" frameRate="25/1" maxWidth="320" maxHeight="180" par="16:9">
              <Representation id="0" mimeType="video/mp4" codecs="avc1.f4000c" bandwidth="49509" width="320" height="180" sar="1:1">
                <BaseURL>manifest-stream0.mp4</BaseURL>
                <SegmentList timescale="1000000" duration="2000000" startNumber="1">
                  <Initialization range="0-814" />
                  <SegmentURL mediaRange="815-13153" indexRange="815-866" />
                  <SegmentURL mediaRange="13154-25252" indexRange="13154-13205" />
                  <SegmentURL mediaRange="25253-37131" indexRange="25253-25304" />
                </SegmentList>
              </Representation>
            </AdaptationSet>
          </Period>
        </MPD>
        """
}
