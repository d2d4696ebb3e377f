//! The game core's domain types ([`chuhe_game::types`]) to and from the wire messages of
//! `chuhe.v1`: the one edge where they meet. Events are converted when a decision is committed
//! (they are stored and sent as protobuf) and when a stored log is read back for recovery.
//!
//! Both directions are field for field. A domain event converted to the wire and back is the
//! same event, and every wire event the server has ever written converts to a domain event that
//! gives back the same bytes (tested below), so logs stored before the core had types of its
//! own still recover. Wire enum numbers that are unspecified or unknown become `None`.

use chuhe_game::types::{self as t, GameResult, Role, Side, StartMode};
use chuhe_proto::v1::{self as w, game_event::Kind as WKind};

// ---- enums ----

/// A side on the wire.
pub fn side(s: Side) -> w::Side {
    match s {
        Side::Red => w::Side::Red,
        Side::Black => w::Side::Black,
    }
}

/// A side or none as a wire enum number.
pub fn side_num(s: Option<Side>) -> i32 {
    s.map_or(w::Side::Unspecified, side) as i32
}

/// A wire side number that names Red or Black (None for unspecified or unknown numbers).
pub fn side_of(n: i32) -> Option<Side> {
    match w::Side::try_from(n) {
        Ok(w::Side::Red) => Some(Side::Red),
        Ok(w::Side::Black) => Some(Side::Black),
        _ => None,
    }
}

/// A result on the wire (`Unspecified` for none).
pub fn result(r: Option<GameResult>) -> w::Result {
    match r {
        None => w::Result::Unspecified,
        Some(GameResult::RedWins) => w::Result::RedWins,
        Some(GameResult::BlackWins) => w::Result::BlackWins,
        Some(GameResult::Draw) => w::Result::Draw,
        Some(GameResult::BothLose) => w::Result::BothLose,
    }
}

/// A wire result number as a result (None: unspecified or unknown).
pub fn result_of(n: i32) -> Option<GameResult> {
    match w::Result::try_from(n) {
        Ok(w::Result::RedWins) => Some(GameResult::RedWins),
        Ok(w::Result::BlackWins) => Some(GameResult::BlackWins),
        Ok(w::Result::Draw) => Some(GameResult::Draw),
        Ok(w::Result::BothLose) => Some(GameResult::BothLose),
        _ => None,
    }
}

/// A role on the wire.
pub fn role(r: Role) -> w::Role {
    match r {
        Role::Player => w::Role::Player,
        Role::Arbiter => w::Role::Arbiter,
        Role::Organizer => w::Role::Organizer,
    }
}

fn role_of(n: i32) -> Option<Role> {
    match w::Role::try_from(n) {
        Ok(w::Role::Player) => Some(Role::Player),
        Ok(w::Role::Arbiter) => Some(Role::Arbiter),
        Ok(w::Role::Organizer) => Some(Role::Organizer),
        _ => None,
    }
}

fn start_mode(m: StartMode) -> w::StartMode {
    match m {
        StartMode::Unspecified => w::StartMode::Unspecified,
        StartMode::Now => w::StartMode::Now,
        StartMode::Scheduled => w::StartMode::Scheduled,
        StartMode::PlayersPresent => w::StartMode::PlayersPresent,
    }
}

fn start_mode_of(n: i32) -> StartMode {
    match w::StartMode::try_from(n) {
        Ok(w::StartMode::Now) => StartMode::Now,
        Ok(w::StartMode::Scheduled) => StartMode::Scheduled,
        Ok(w::StartMode::PlayersPresent) => StartMode::PlayersPresent,
        _ => StartMode::Unspecified,
    }
}

fn ruling_kind(k: Option<t::RulingKind>) -> i32 {
    let k = match k {
        None => w::RulingKind::Unspecified,
        Some(t::RulingKind::Warning) => w::RulingKind::Warning,
        Some(t::RulingKind::Decision) => w::RulingKind::Decision,
        Some(t::RulingKind::None) => w::RulingKind::None,
    };
    k as i32
}

fn ruling_kind_of(n: i32) -> Option<t::RulingKind> {
    match w::RulingKind::try_from(n) {
        Ok(w::RulingKind::Warning) => Some(t::RulingKind::Warning),
        Ok(w::RulingKind::Decision) => Some(t::RulingKind::Decision),
        Ok(w::RulingKind::None) => Some(t::RulingKind::None),
        _ => None,
    }
}

fn move_class(c: Option<t::MoveClass>) -> i32 {
    let c = match c {
        None => w::MoveClass::Unspecified,
        Some(t::MoveClass::Idle) => w::MoveClass::Idle,
        Some(t::MoveClass::Check) => w::MoveClass::Check,
        Some(t::MoveClass::MateThreat) => w::MoveClass::MateThreat,
        Some(t::MoveClass::Chase) => w::MoveClass::Chase,
    };
    c as i32
}

fn move_class_of(n: i32) -> Option<t::MoveClass> {
    match w::MoveClass::try_from(n) {
        Ok(w::MoveClass::Idle) => Some(t::MoveClass::Idle),
        Ok(w::MoveClass::Check) => Some(t::MoveClass::Check),
        Ok(w::MoveClass::MateThreat) => Some(t::MoveClass::MateThreat),
        Ok(w::MoveClass::Chase) => Some(t::MoveClass::Chase),
        _ => None,
    }
}

/// An arbiter command's action as the core takes it.
pub fn arbiter_action(a: &w::arbiter_command::Action) -> t::ArbiterAction {
    use w::arbiter_command::Action as A;
    match a {
        A::Pause(_) => t::ArbiterAction::Pause,
        A::Resume(_) => t::ArbiterAction::Resume,
        A::AddTime(x) => t::ArbiterAction::AddTime {
            side: side_of(x.side),
            delta_ms: x.delta_ms,
        },
        A::RecordFoul(x) => t::ArbiterAction::RecordFoul {
            side: side_of(x.side),
        },
        A::SetResult(x) => t::ArbiterAction::SetResult {
            result: result_of(x.result),
        },
        A::OverrideRuling(x) => t::ArbiterAction::OverrideRuling {
            ruling_seq: x.ruling_seq,
            result: result_of(x.result),
        },
    }
}

/// An arbiter action as the wire carries it (the inverse of [`arbiter_action`]).
pub fn arbiter_action_wire(a: &t::ArbiterAction) -> w::arbiter_command::Action {
    use w::arbiter_command::Action as A;
    match a {
        t::ArbiterAction::Pause => A::Pause(w::PauseGame {}),
        t::ArbiterAction::Resume => A::Resume(w::ResumeGame {}),
        t::ArbiterAction::AddTime { side, delta_ms } => A::AddTime(w::AddTime {
            side: side_num(*side),
            delta_ms: *delta_ms,
        }),
        t::ArbiterAction::RecordFoul { side } => A::RecordFoul(w::RecordFoul {
            side: side_num(*side),
        }),
        t::ArbiterAction::SetResult { result: r } => A::SetResult(w::SetResult {
            result: result(*r) as i32,
        }),
        t::ArbiterAction::OverrideRuling {
            ruling_seq,
            result: r,
        } => A::OverrideRuling(w::OverrideRuling {
            ruling_seq: *ruling_seq,
            result: result(*r) as i32,
        }),
    }
}

// ---- messages, domain to wire ----

fn side_clock(c: t::SideClock) -> w::SideClock {
    w::SideClock {
        remaining_ms: c.remaining_ms,
        periods_left: c.periods_left,
        in_byoyomi: c.in_byoyomi,
    }
}

/// The clocks as the wire carries them.
pub fn clock_state(c: t::ClockState) -> w::ClockState {
    w::ClockState {
        red: c.red.map(side_clock),
        black: c.black.map(side_clock),
        running: side_num(c.running),
        paused: c.paused,
    }
}

/// A game's description as the wire carries it.
pub fn info(i: t::GameInfo) -> w::GameInfo {
    w::GameInfo {
        game_id: i.game_id,
        red_id: i.red_id,
        red_name: i.red_name,
        black_id: i.black_id,
        black_name: i.black_name,
        time_control: i.time_control,
        ruleset: i.ruleset,
        initial_fen: i.initial_fen,
        event: i.event,
        round: i.round,
        board: i.board,
        delay: i.delay.map(|d| w::BroadcastDelay {
            plies: d.plies,
            seconds: d.seconds,
        }),
        move_limit_plies: i.move_limit_plies,
        created_at_ms: i.created_at_ms,
        start_mode: start_mode(i.start_mode) as i32,
        scheduled_start_ms: i.scheduled_start_ms,
        lateness_limit_ms: i.lateness_limit_ms,
        league: i.league.map(league_board),
        calls: i.calls.map(|c| w::CallSettings {
            max_per_side: c.max_per_side,
            clock_runs: c.clock_runs,
        }),
    }
}

/// A league board as the wire carries it.
pub fn league_board(b: t::LeagueBoard) -> w::LeagueBoard {
    w::LeagueBoard {
        league_id: b.league_id,
        round: b.round,
        table: b.table,
        board: b.board,
        stage: b.stage,
    }
}

/// A phrase as the wire carries it.
pub fn phrase(p: t::Phrase) -> w::Phrase {
    w::Phrase {
        code: p.code,
        params: p
            .params
            .into_iter()
            .map(|x| w::PhraseParam {
                name: x.name,
                value: x.value,
            })
            .collect(),
    }
}

fn note(n: t::ArbiterNote) -> w::ArbiterNote {
    w::ArbiterNote {
        arbiter_id: n.arbiter_id,
        reason: n.reason,
    }
}

/// A ruling as the wire carries it.
pub fn ruling(r: t::Ruling) -> w::Ruling {
    w::Ruling {
        kind: ruling_kind(r.kind),
        side: side_num(r.side),
        result: result(r.result) as i32,
        article: r.article,
        explanation: r.explanation,
        cycle: r
            .cycle
            .into_iter()
            .map(|m| w::RulingMove {
                ply: m.ply,
                iccs: m.iccs,
                chinese: m.chinese,
                class: move_class(m.class),
                chased: m.chased,
            })
            .collect(),
        ply: r.ply,
        phrase: r.phrase.map(phrase),
        explanation_en: r.explanation_en,
        explanation_zh: r.explanation_zh,
    }
}

/// An event as the wire carries it (and the log stores it).
pub fn event(e: t::GameEvent) -> w::GameEvent {
    w::GameEvent {
        game_id: e.game_id,
        seq: e.seq,
        at_ms: e.at_ms,
        kind: e.kind.map(kind),
    }
}

fn kind(k: t::Kind) -> WKind {
    use t::Kind as K;
    let cs = |c: Option<t::ClockState>| c.map(clock_state);
    match k {
        K::Created(c) => WKind::Created(w::GameCreated {
            info: c.info.map(|i| info(*i)),
            clock: cs(c.clock),
        }),
        K::Move(m) => WKind::Move(w::MovePlayed {
            r#move: m.mv.map(|r| w::MoveRecord {
                ply: r.ply,
                iccs: r.iccs,
                chinese: r.chinese,
                wxf: r.wxf,
                spent_ms: r.spent_ms,
                fen: r.fen,
                check: r.check,
                capture: r.capture,
            }),
            clock: cs(m.clock),
            side: side_num(m.side),
        }),
        K::DrawOffered(d) => WKind::DrawOffered(w::DrawOffered {
            side: side_num(d.side),
        }),
        K::DrawDeclined(d) => WKind::DrawDeclined(w::DrawDeclined {
            side: side_num(d.side),
            by_moving: d.by_moving,
        }),
        K::Foul(f) => WKind::Foul(w::FoulRecorded {
            side: side_num(f.side),
            code: f.code,
            explanation: f.explanation,
            count: f.count,
            arbiter: f.arbiter.map(note),
            phrase: f.phrase.map(phrase),
        }),
        K::ClockAdjusted(c) => WKind::ClockAdjusted(w::ClockAdjusted {
            side: side_num(c.side),
            delta_ms: c.delta_ms,
            code: c.code,
            clock: cs(c.clock),
            arbiter: c.arbiter.map(note),
        }),
        K::Paused(p) => WKind::Paused(w::GamePaused {
            clock: cs(p.clock),
            arbiter: p.arbiter.map(note),
        }),
        K::Resumed(p) => WKind::Resumed(w::GameResumed {
            clock: cs(p.clock),
            arbiter: p.arbiter.map(note),
        }),
        K::Ruling(r) => WKind::Ruling(w::RulingIssued {
            ruling: r.ruling.map(ruling),
        }),
        K::Ended(e) => WKind::Ended(w::GameEnded {
            result: result(e.result) as i32,
            reason: e.reason,
            explanation: e.explanation,
            clock: cs(e.clock),
            arbiter: e.arbiter.map(note),
            phrase: e.phrase.map(phrase),
        }),
        K::RulingOverridden(o) => WKind::RulingOverridden(w::RulingOverridden {
            ruling_seq: o.ruling_seq,
            result: result(o.result) as i32,
            arbiter: o.arbiter.map(note),
        }),
        K::ServerRestarted(r) => WKind::ServerRestarted(w::ServerRestarted {
            clock: cs(r.clock),
            downtime_ms: r.downtime_ms,
        }),
        K::Started(s) => WKind::Started(w::GameStarted {
            clock: cs(s.clock),
            started_at_ms: s.started_at_ms,
        }),
        K::Joined(j) => WKind::Joined(w::PlayerJoined {
            side: side_num(j.side),
        }),
        K::ArbiterCalled(c) => WKind::ArbiterCalled(w::ArbiterCalled {
            side: side_num(c.side),
            reason: c.reason,
            clock: cs(c.clock),
            clock_stopped: c.clock_stopped,
            count: c.count,
        }),
        K::CallTaken(c) => WKind::CallTaken(w::CallTaken {
            call_seq: c.call_seq,
            arbiter: c.arbiter.map(note),
        }),
        K::CallClosed(c) => WKind::CallClosed(w::CallClosed {
            call_seq: c.call_seq,
            arbiter: c.arbiter.map(note),
        }),
        K::Message(m) => WKind::Message(w::GameMessage {
            from_id: m.from_id,
            from_role: m.from_role.map_or(w::Role::Unspecified, role) as i32,
            from_side: side_num(m.from_side),
            to: side_num(m.to),
            text: m.text,
            call_seq: m.call_seq,
        }),
    }
}

// ---- messages, wire to domain ----

fn side_clock_of(c: w::SideClock) -> t::SideClock {
    t::SideClock {
        remaining_ms: c.remaining_ms,
        periods_left: c.periods_left,
        in_byoyomi: c.in_byoyomi,
    }
}

/// The clocks as the core names them.
pub fn clock_state_of(c: w::ClockState) -> t::ClockState {
    t::ClockState {
        red: c.red.map(side_clock_of),
        black: c.black.map(side_clock_of),
        running: side_of(c.running),
        paused: c.paused,
    }
}

/// A game's description as the core takes it.
pub fn info_of(i: w::GameInfo) -> t::GameInfo {
    t::GameInfo {
        game_id: i.game_id,
        red_id: i.red_id,
        red_name: i.red_name,
        black_id: i.black_id,
        black_name: i.black_name,
        time_control: i.time_control,
        ruleset: i.ruleset,
        initial_fen: i.initial_fen,
        event: i.event,
        round: i.round,
        board: i.board,
        delay: i.delay.map(|d| t::BroadcastDelay {
            plies: d.plies,
            seconds: d.seconds,
        }),
        move_limit_plies: i.move_limit_plies,
        created_at_ms: i.created_at_ms,
        start_mode: start_mode_of(i.start_mode),
        scheduled_start_ms: i.scheduled_start_ms,
        lateness_limit_ms: i.lateness_limit_ms,
        league: i.league.map(|b| t::LeagueBoard {
            league_id: b.league_id,
            round: b.round,
            table: b.table,
            board: b.board,
            stage: b.stage,
        }),
        calls: i.calls.map(|c| t::CallSettings {
            max_per_side: c.max_per_side,
            clock_runs: c.clock_runs,
        }),
    }
}

fn phrase_of(p: w::Phrase) -> t::Phrase {
    t::Phrase {
        code: p.code,
        params: p
            .params
            .into_iter()
            .map(|x| t::PhraseParam {
                name: x.name,
                value: x.value,
            })
            .collect(),
    }
}

fn note_of(n: w::ArbiterNote) -> t::ArbiterNote {
    t::ArbiterNote {
        arbiter_id: n.arbiter_id,
        reason: n.reason,
    }
}

fn ruling_of(r: w::Ruling) -> t::Ruling {
    t::Ruling {
        kind: ruling_kind_of(r.kind),
        side: side_of(r.side),
        result: result_of(r.result),
        article: r.article,
        explanation: r.explanation,
        cycle: r
            .cycle
            .into_iter()
            .map(|m| t::RulingMove {
                ply: m.ply,
                iccs: m.iccs,
                chinese: m.chinese,
                class: move_class_of(m.class),
                chased: m.chased,
            })
            .collect(),
        ply: r.ply,
        phrase: r.phrase.map(phrase_of),
        explanation_en: r.explanation_en,
        explanation_zh: r.explanation_zh,
    }
}

/// A wire (or stored) event as the core folds it. A `private` stand-in, which is never
/// stored, has no domain kind.
pub fn event_of(e: w::GameEvent) -> t::GameEvent {
    t::GameEvent {
        game_id: e.game_id,
        seq: e.seq,
        at_ms: e.at_ms,
        kind: e.kind.and_then(kind_of),
    }
}

fn kind_of(k: WKind) -> Option<t::Kind> {
    use t::Kind as K;
    let cs = |c: Option<w::ClockState>| c.map(clock_state_of);
    Some(match k {
        WKind::Created(c) => K::Created(t::GameCreated {
            info: c.info.map(|i| Box::new(info_of(i))),
            clock: cs(c.clock),
        }),
        WKind::Move(m) => K::Move(t::MovePlayed {
            mv: m.r#move.map(|r| t::MoveRecord {
                ply: r.ply,
                iccs: r.iccs,
                chinese: r.chinese,
                wxf: r.wxf,
                spent_ms: r.spent_ms,
                fen: r.fen,
                check: r.check,
                capture: r.capture,
            }),
            clock: cs(m.clock),
            side: side_of(m.side),
        }),
        WKind::DrawOffered(d) => K::DrawOffered(t::DrawOffered {
            side: side_of(d.side),
        }),
        WKind::DrawDeclined(d) => K::DrawDeclined(t::DrawDeclined {
            side: side_of(d.side),
            by_moving: d.by_moving,
        }),
        WKind::Foul(f) => K::Foul(t::FoulRecorded {
            side: side_of(f.side),
            code: f.code,
            explanation: f.explanation,
            count: f.count,
            arbiter: f.arbiter.map(note_of),
            phrase: f.phrase.map(phrase_of),
        }),
        WKind::ClockAdjusted(c) => K::ClockAdjusted(t::ClockAdjusted {
            side: side_of(c.side),
            delta_ms: c.delta_ms,
            code: c.code,
            clock: cs(c.clock),
            arbiter: c.arbiter.map(note_of),
        }),
        WKind::Paused(p) => K::Paused(t::GamePaused {
            clock: cs(p.clock),
            arbiter: p.arbiter.map(note_of),
        }),
        WKind::Resumed(p) => K::Resumed(t::GameResumed {
            clock: cs(p.clock),
            arbiter: p.arbiter.map(note_of),
        }),
        WKind::Ruling(r) => K::Ruling(t::RulingIssued {
            ruling: r.ruling.map(ruling_of),
        }),
        WKind::Ended(e) => K::Ended(t::GameEnded {
            result: result_of(e.result),
            reason: e.reason,
            explanation: e.explanation,
            clock: cs(e.clock),
            arbiter: e.arbiter.map(note_of),
            phrase: e.phrase.map(phrase_of),
        }),
        WKind::RulingOverridden(o) => K::RulingOverridden(t::RulingOverridden {
            ruling_seq: o.ruling_seq,
            result: result_of(o.result),
            arbiter: o.arbiter.map(note_of),
        }),
        WKind::ServerRestarted(r) => K::ServerRestarted(t::ServerRestarted {
            clock: cs(r.clock),
            downtime_ms: r.downtime_ms,
        }),
        WKind::Started(s) => K::Started(t::GameStarted {
            clock: cs(s.clock),
            started_at_ms: s.started_at_ms,
        }),
        WKind::Joined(j) => K::Joined(t::PlayerJoined {
            side: side_of(j.side),
        }),
        WKind::ArbiterCalled(c) => K::ArbiterCalled(t::ArbiterCalled {
            side: side_of(c.side),
            reason: c.reason,
            clock: cs(c.clock),
            clock_stopped: c.clock_stopped,
            count: c.count,
        }),
        WKind::CallTaken(c) => K::CallTaken(t::CallTaken {
            call_seq: c.call_seq,
            arbiter: c.arbiter.map(note_of),
        }),
        WKind::CallClosed(c) => K::CallClosed(t::CallClosed {
            call_seq: c.call_seq,
            arbiter: c.arbiter.map(note_of),
        }),
        WKind::Message(m) => K::Message(t::GameMessage {
            from_id: m.from_id,
            from_role: role_of(m.from_role),
            from_side: side_of(m.from_side),
            to: side_of(m.to),
            text: m.text,
            call_seq: m.call_seq,
        }),
        WKind::Private(_) => return None,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use prost::Message;

    fn side_opt() -> impl Strategy<Value = Option<Side>> {
        prop_oneof![Just(None), Just(Some(Side::Red)), Just(Some(Side::Black))]
    }

    fn result_opt() -> impl Strategy<Value = Option<GameResult>> {
        prop_oneof![
            Just(None),
            Just(Some(GameResult::RedWins)),
            Just(Some(GameResult::BlackWins)),
            Just(Some(GameResult::Draw)),
            Just(Some(GameResult::BothLose)),
        ]
    }

    fn text() -> impl Strategy<Value = String> {
        "[a-z0-9 炮]{0,6}"
    }

    fn clock() -> impl Strategy<Value = Option<t::ClockState>> {
        let sc = (any::<u64>(), any::<u32>(), any::<bool>()).prop_map(|(r, p, b)| t::SideClock {
            remaining_ms: r,
            periods_left: p,
            in_byoyomi: b,
        });
        proptest::option::of(
            (
                proptest::option::of(sc.clone()),
                proptest::option::of(sc),
                side_opt(),
                any::<bool>(),
            )
                .prop_map(|(red, black, running, paused)| t::ClockState {
                    red,
                    black,
                    running,
                    paused,
                }),
        )
    }

    fn note() -> impl Strategy<Value = Option<t::ArbiterNote>> {
        proptest::option::of((text(), text()).prop_map(|(a, r)| t::ArbiterNote {
            arbiter_id: a,
            reason: r,
        }))
    }

    fn phrase() -> impl Strategy<Value = Option<t::Phrase>> {
        proptest::option::of(
            (
                text(),
                proptest::collection::vec(
                    (text(), text()).prop_map(|(name, value)| t::PhraseParam { name, value }),
                    0..3,
                ),
            )
                .prop_map(|(code, params)| t::Phrase { code, params }),
        )
    }

    fn start_mode() -> impl Strategy<Value = StartMode> {
        prop_oneof![
            Just(StartMode::Unspecified),
            Just(StartMode::Now),
            Just(StartMode::Scheduled),
            Just(StartMode::PlayersPresent),
        ]
    }

    fn info() -> impl Strategy<Value = t::GameInfo> {
        (
            (text(), text(), text(), text(), text(), text(), text()),
            (
                any::<u32>(),
                any::<u64>(),
                start_mode(),
                any::<u64>(),
                any::<u64>(),
            ),
            proptest::option::of((any::<u32>(), any::<u32>())),
            proptest::option::of((text(), any::<u32>(), any::<u32>())),
            proptest::option::of((any::<u32>(), any::<bool>())),
        )
            .prop_map(|(s, n, delay, league, calls)| t::GameInfo {
                game_id: s.0,
                red_id: s.1,
                red_name: s.2,
                black_id: s.3,
                black_name: s.4,
                time_control: s.5,
                ruleset: s.6,
                initial_fen: "fen".into(),
                event: "e".into(),
                round: "r".into(),
                board: "b".into(),
                delay: delay.map(|(plies, seconds)| t::BroadcastDelay { plies, seconds }),
                move_limit_plies: n.0,
                created_at_ms: n.1,
                start_mode: n.2,
                scheduled_start_ms: n.3,
                lateness_limit_ms: n.4,
                league: league.map(|(id, round, board)| t::LeagueBoard {
                    league_id: id,
                    round,
                    table: round / 2,
                    board,
                    stage: board % 3,
                }),
                calls: calls.map(|(max_per_side, clock_runs)| t::CallSettings {
                    max_per_side,
                    clock_runs,
                }),
            })
    }

    fn ruling() -> impl Strategy<Value = t::Ruling> {
        let kind = prop_oneof![
            Just(None),
            Just(Some(t::RulingKind::Warning)),
            Just(Some(t::RulingKind::Decision)),
            Just(Some(t::RulingKind::None)),
        ];
        let class = prop_oneof![
            Just(None),
            Just(Some(t::MoveClass::Idle)),
            Just(Some(t::MoveClass::Check)),
            Just(Some(t::MoveClass::MateThreat)),
            Just(Some(t::MoveClass::Chase)),
        ];
        let mv = (
            any::<u32>(),
            text(),
            class,
            proptest::collection::vec(text(), 0..2),
        )
            .prop_map(|(ply, iccs, class, chased)| t::RulingMove {
                ply,
                chinese: iccs.clone(),
                iccs,
                class,
                chased,
            });
        (
            kind,
            side_opt(),
            result_opt(),
            text(),
            proptest::collection::vec(mv, 0..3),
            any::<u32>(),
            phrase(),
        )
            .prop_map(|(kind, side, result, s, cycle, ply, phrase)| t::Ruling {
                kind,
                side,
                result,
                article: s.clone(),
                explanation: s.clone(),
                cycle,
                ply,
                phrase,
                explanation_en: s.clone(),
                explanation_zh: s,
            })
    }

    fn kind() -> impl Strategy<Value = t::Kind> {
        use t::Kind as K;
        let role = prop_oneof![
            Just(None),
            Just(Some(Role::Player)),
            Just(Some(Role::Arbiter)),
            Just(Some(Role::Organizer)),
        ];
        let mv = (any::<u32>(), text(), any::<u64>(), any::<bool>()).prop_map(
            |(ply, s, spent_ms, b)| t::MoveRecord {
                ply,
                iccs: s.clone(),
                chinese: s.clone(),
                wxf: s.clone(),
                spent_ms,
                fen: s,
                check: b,
                capture: !b,
            },
        );
        prop_oneof![
            (proptest::option::of(info().prop_map(Box::new)), clock())
                .prop_map(|(info, clock)| K::Created(t::GameCreated { info, clock })),
            (proptest::option::of(mv), clock(), side_opt())
                .prop_map(|(mv, clock, side)| K::Move(t::MovePlayed { mv, clock, side })),
            side_opt().prop_map(|side| K::DrawOffered(t::DrawOffered { side })),
            (side_opt(), any::<bool>())
                .prop_map(|(side, by_moving)| K::DrawDeclined(t::DrawDeclined { side, by_moving })),
            (side_opt(), text(), any::<u32>(), note(), phrase()).prop_map(
                |(side, code, count, arbiter, phrase)| K::Foul(t::FoulRecorded {
                    side,
                    explanation: code.clone(),
                    code,
                    count,
                    arbiter,
                    phrase,
                })
            ),
            (side_opt(), any::<i64>(), text(), clock(), note()).prop_map(
                |(side, delta_ms, code, clock, arbiter)| K::ClockAdjusted(t::ClockAdjusted {
                    side,
                    delta_ms,
                    code,
                    clock,
                    arbiter,
                })
            ),
            (clock(), note())
                .prop_map(|(clock, arbiter)| K::Paused(t::GamePaused { clock, arbiter })),
            (clock(), note())
                .prop_map(|(clock, arbiter)| K::Resumed(t::GameResumed { clock, arbiter })),
            proptest::option::of(ruling()).prop_map(|ruling| K::Ruling(t::RulingIssued { ruling })),
            (result_opt(), text(), clock(), note(), phrase()).prop_map(
                |(result, reason, clock, arbiter, phrase)| K::Ended(t::GameEnded {
                    result,
                    explanation: reason.clone(),
                    reason,
                    clock,
                    arbiter,
                    phrase,
                })
            ),
            (any::<u64>(), result_opt(), note()).prop_map(|(ruling_seq, result, arbiter)| {
                K::RulingOverridden(t::RulingOverridden {
                    ruling_seq,
                    result,
                    arbiter,
                })
            }),
            (clock(), any::<u64>()).prop_map(|(clock, downtime_ms)| K::ServerRestarted(
                t::ServerRestarted { clock, downtime_ms }
            )),
            (clock(), any::<u64>()).prop_map(|(clock, started_at_ms)| K::Started(t::GameStarted {
                clock,
                started_at_ms
            })),
            side_opt().prop_map(|side| K::Joined(t::PlayerJoined { side })),
            (side_opt(), text(), clock(), any::<bool>(), any::<u32>()).prop_map(
                |(side, reason, clock, clock_stopped, count)| K::ArbiterCalled(t::ArbiterCalled {
                    side,
                    reason,
                    clock,
                    clock_stopped,
                    count,
                })
            ),
            (any::<u64>(), note())
                .prop_map(|(call_seq, arbiter)| K::CallTaken(t::CallTaken { call_seq, arbiter })),
            (any::<u64>(), note())
                .prop_map(|(call_seq, arbiter)| K::CallClosed(t::CallClosed { call_seq, arbiter })),
            (text(), role, side_opt(), side_opt(), text(), any::<u64>()).prop_map(
                |(from_id, from_role, from_side, to, text, call_seq)| K::Message(t::GameMessage {
                    from_id,
                    from_role,
                    from_side,
                    to,
                    text,
                    call_seq,
                })
            ),
        ]
    }

    fn game_event() -> impl Strategy<Value = t::GameEvent> {
        (
            text(),
            any::<u64>(),
            any::<u64>(),
            proptest::option::of(kind()),
        )
            .prop_map(|(game_id, seq, at_ms, kind)| t::GameEvent {
                game_id,
                seq,
                at_ms,
                kind,
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// Domain → wire → domain is the identity, and the wire event's bytes decode back to
        /// an event that converts to the same domain event and re-encodes to the same bytes
        /// (a stored log recovers exactly).
        #[test]
        fn events_round_trip_through_the_wire(ev in game_event()) {
            let wire = event(ev.clone());
            let bytes = wire.encode_to_vec();
            let decoded = w::GameEvent::decode(bytes.as_slice()).unwrap();
            let back = event_of(decoded);
            prop_assert_eq!(&back, &ev);
            prop_assert_eq!(event(back).encode_to_vec(), bytes);
        }
    }

    #[test]
    fn every_wire_kind_but_the_private_stand_in_has_a_domain_kind() {
        let private = w::GameEvent {
            kind: Some(WKind::Private(w::PrivateEvent { clock: None })),
            ..w::GameEvent::default()
        };
        assert_eq!(event_of(private).kind, None);
        assert_eq!(side_of(99), None);
        assert_eq!(side_of(w::Side::Black as i32), Some(Side::Black));
        assert_eq!(result_of(w::Result::Unspecified as i32), None);
        assert_eq!(result(Some(GameResult::Draw)), w::Result::Draw);
        for r in [
            GameResult::RedWins,
            GameResult::BlackWins,
            GameResult::Draw,
            GameResult::BothLose,
        ] {
            // The phrase parameter keeps the wire's enum name.
            assert_eq!(r.code(), result(Some(r)).as_str_name());
        }
    }
}
