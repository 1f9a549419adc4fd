/*
 * rtree.h - finding nodes of a loaded profile's trees, for the unit tests
 * of the report model.
 */
#ifndef CP_TESTS_UNIT_RTREE_H
#define CP_TESTS_UNIT_RTREE_H

#include "report/report.h"
#include "tests/unit/unittest.h"

/* The node of tree t with function address fn under node parent (fails the test if none). */
static inline const struct cp_rnode *find(const struct cp_report_profile *rp,
					  const struct cp_rtree *t, uint32_t parent, uint64_t fn)
{
	for (uint32_t c = t->n[parent].first_child; c != CP_NONE; c = t->n[c].next)
		if (rp->fns[t->n[c].fn].addr == fn)
			return &t->n[c];
	cp_test__fail(__FILE__, __LINE__, "no child 0x%llx under node %u", (unsigned long long)fn,
		      parent);
}

#endif /* CP_TESTS_UNIT_RTREE_H */
