package hub

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// SlotStream is the stream where each slot's claim is recorded once, for good (until its TTL):
// the slot register. Claim keys can be deleted by anyone who may write them (a KV delete is a
// write), and a deleted claim let a device catching up run the slot again; a record in this
// stream can be neither replaced (one message per subject, a second refused) nor deleted
// (DenyDelete, DenyPurge; devices with credentials may not touch the stream's configuration)
// (docs/design.md#98-signed-claims-and-the-trust-model).
const SlotStream = "routinely-slots"

// slotPrefix is the subject prefix of the register's records: slotPrefix + routine + "." + slot
// in Unix nanoseconds.
const slotPrefix = "routinely.slot."

// SlotStreamConfig is the register's configuration: `routinely hub` creates it.
func SlotStreamConfig() jetstream.StreamConfig {
	return jetstream.StreamConfig{
		Name: SlotStream, Description: "Routinely: each slot's claim, recorded once",
		Subjects: []string{slotPrefix + ">"}, Storage: jetstream.FileStorage,
		MaxMsgsPerSubject: 1, Discard: jetstream.DiscardNew, DiscardNewPerSubject: true,
		DenyDelete: true, DenyPurge: true, AllowMsgTTL: true, AllowDirect: true,
	}
}

func slotSubject(routine string, slot time.Time) string {
	return slotPrefix + routine + "." + strconv.FormatInt(slot.UnixNano(), 10)
}

// register returns the slot register, nil when the hub has none (a stock server, a hub of a
// version before it: claims are then decided by the claim keys alone).
func (c *Client) register(ctx context.Context) jetstream.Stream {
	c.mu.Lock()
	s, js := c.slots, c.js
	c.mu.Unlock()
	if s != nil || js == nil {
		return s
	}
	s, err := js.Stream(ctx, SlotStream)
	if err != nil {
		c.log.Debug("no slot register on the hub", "err", err)
		return nil
	}
	c.mu.Lock()
	c.slots = s
	c.mu.Unlock()
	return s
}

// recorded returns the holder the register has for me.Slot of routine when this device trusts
// it (nil: none, one not trusted, or no register). Errors: the hub's, unwrapped.
func (c *Client) recorded(ctx context.Context, routine string, me holder) (*holder, error) {
	s := c.register(ctx)
	if s == nil {
		return nil, nil
	}
	subj := slotSubject(routine, me.Slot)
	m, err := s.GetLastMsgForSubject(ctx, subj)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var h holder
	if json.Unmarshal(m.Data, &h) != nil || !c.trusted(subj, routine, me.Slot, h) {
		return nil, nil
	}
	return &h, nil
}

// record records this device's claim me (value val) of routine in the register, kept for keep,
// and returns nil when the register has it (now or from before), or the trusted holder of
// another device recorded first (a claim key deleted after that device won it). Errors: the
// hub's, unwrapped.
func (c *Client) record(ctx context.Context, routine string, me holder, val []byte, keep time.Duration) (*holder, error) {
	s := c.register(ctx)
	if s == nil {
		return nil, nil
	}
	c.mu.Lock()
	js := c.js
	c.mu.Unlock()
	_, err := js.Publish(ctx, slotSubject(routine, me.Slot), val,
		jetstream.WithExpectLastSequencePerSubject(0), jetstream.WithMsgTTL(keep.Round(time.Second)+time.Second))
	var api *jetstream.APIError
	if err != nil && !errors.As(err, &api) {
		return nil, err
	}
	if err == nil {
		return nil, nil
	}
	h, err := c.recorded(ctx, routine, me)
	if err != nil || h == nil || c.mine(*h, me) {
		return nil, err // a record not trusted cannot be replaced: the claim key decides
	}
	return h, nil
}
