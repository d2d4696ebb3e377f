//! Who sees which event of a game's arbiter channel (calls to the arbiter, their taking and
//! closing, messages): the arbiters everything, a player what is theirs, anyone else a
//! `private` stand-in that keeps the seq contiguous and the clocks. Applied to the wire events
//! as they are sent.

use chuhe_proto::v1::{self as w, Role as WRole, Side, game_event::Kind};

/// Who may see an event of the arbiter channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Viewer {
    /// One of the game's arbiters (or an organizer): sees everything.
    Arbiter,
    /// A player of the game.
    Player(Side),
    /// Anyone else.
    Spectator,
}

/// Whether `k` belongs to the arbiter channel (the only events not everyone sees).
pub fn is_private(k: Option<&Kind>) -> bool {
    matches!(
        k,
        Some(Kind::ArbiterCalled(_) | Kind::CallTaken(_) | Kind::CallClosed(_) | Kind::Message(_))
    )
}

/// The event `ev` of the arbiter channel as `viewer` receives it: whole, without what is not
/// theirs (a call's reason for the opponent), or as a [`w::PrivateEvent`] keeping only the
/// clocks. `clock`: the clocks after the event (for the stand-in).
pub fn redact(ev: &w::GameEvent, viewer: Viewer, clock: Option<w::ClockState>) -> w::GameEvent {
    let clock = clock.or(match &ev.kind {
        Some(Kind::ArbiterCalled(c)) => c.clock,
        _ => None,
    });
    let stand_in = || w::GameEvent {
        game_id: ev.game_id.clone(),
        seq: ev.seq,
        at_ms: ev.at_ms,
        kind: Some(Kind::Private(w::PrivateEvent { clock })),
    };
    let Viewer::Player(me) = viewer else {
        return match viewer {
            Viewer::Arbiter => ev.clone(),
            _ => stand_in(),
        };
    };
    match &ev.kind {
        Some(Kind::ArbiterCalled(c)) if c.side != me as i32 => {
            let mut e = ev.clone();
            if let Some(Kind::ArbiterCalled(c)) = &mut e.kind {
                c.reason.clear();
            }
            e
        }
        Some(Kind::Message(m)) => {
            let mine = m.from_side == me as i32;
            let to_me = m.from_role == WRole::Arbiter as i32
                && (m.to == Side::Unspecified as i32 || m.to == me as i32);
            if mine || to_me {
                ev.clone()
            } else {
                stand_in()
            }
        }
        _ => ev.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(from_role: WRole, from_side: Side, to: Side) -> w::GameEvent {
        w::GameEvent {
            game_id: "1".into(),
            seq: 9,
            at_ms: 5,
            kind: Some(Kind::Message(w::GameMessage {
                from_id: "3".into(),
                from_role: from_role as i32,
                from_side: from_side as i32,
                to: to as i32,
                text: "hello".into(),
                call_seq: 8,
            })),
        }
    }

    fn hidden(e: &w::GameEvent) -> bool {
        matches!(e.kind, Some(Kind::Private(_)))
    }

    #[test]
    fn messages_reach_only_their_audience() {
        let red = msg(WRole::Player, Side::Red, Side::Unspecified);
        assert!(!hidden(&redact(&red, Viewer::Arbiter, None)));
        assert!(!hidden(&redact(&red, Viewer::Player(Side::Red), None)));
        assert!(hidden(&redact(&red, Viewer::Player(Side::Black), None)));
        assert!(hidden(&redact(&red, Viewer::Spectator, None)));
        let to_black = msg(WRole::Arbiter, Side::Unspecified, Side::Black);
        assert!(hidden(&redact(&to_black, Viewer::Player(Side::Red), None)));
        assert!(!hidden(&redact(
            &to_black,
            Viewer::Player(Side::Black),
            None
        )));
        assert!(hidden(&redact(&to_black, Viewer::Spectator, None)));
        let to_both = msg(WRole::Arbiter, Side::Unspecified, Side::Unspecified);
        assert!(!hidden(&redact(&to_both, Viewer::Player(Side::Red), None)));
        assert!(!hidden(&redact(
            &to_both,
            Viewer::Player(Side::Black),
            None
        )));
        // The stand-in keeps the seq.
        assert_eq!(redact(&to_both, Viewer::Spectator, None).seq, 9);
    }

    #[test]
    fn the_opponent_sees_a_call_without_its_reason() {
        let ev = w::GameEvent {
            game_id: "1".into(),
            seq: 4,
            at_ms: 5,
            kind: Some(Kind::ArbiterCalled(w::ArbiterCalled {
                side: Side::Red as i32,
                reason: "my opponent is using an engine".into(),
                clock: None,
                clock_stopped: true,
                count: 1,
            })),
        };
        let reason = |e: w::GameEvent| match e.kind {
            Some(Kind::ArbiterCalled(c)) => Some(c.reason),
            _ => None,
        };
        assert_eq!(
            reason(redact(&ev, Viewer::Player(Side::Red), None)).as_deref(),
            Some("my opponent is using an engine")
        );
        assert_eq!(
            reason(redact(&ev, Viewer::Player(Side::Black), None)).as_deref(),
            Some("")
        );
        assert!(hidden(&redact(&ev, Viewer::Spectator, None)));
    }
}
