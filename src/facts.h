/* SPDX-License-Identifier: MIT */
/*
 * cw layer 6.2 (internal): the facts of an auto wait (policy.h), gathered in
 * one place for cw_wait and for cw_advice_get, which asks the policy the
 * same question without waiting.
 */
#ifndef CW_FACTS_H
#define CW_FACTS_H

#include "policy.h"
#include "strategy.h"

/* The facts of a wait planned in `p`: its queue planned
 * (cw__estimate_plan, or the key and expected wait set), p->driver the
 * platform's record or NULL. Reads the spare-CPU view only where the
 * policy says it matters. */
void cw__facts_of(const cw__plan *p, cw__facts *f);

/* The calling thread's auto wait took its turn (the sampling turns). */
void cw__facts_turn(void);

#endif
