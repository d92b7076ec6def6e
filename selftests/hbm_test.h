/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal TAP test framework for bpf_hbm's C tests.
 *
 * A test is a function returning void that uses the ASSERT_* macros; each
 * macro returns bool so a test reads "if (!ASSERT_OK(err, "load")) return;".
 * A failed assertion prints "# name:FAIL:what expected vs got" and marks the
 * running test failed. HBM_TEST_MAIN() emits TAP ("ok N - name") and accepts
 * test names on the command line to run a subset; a name that matches no
 * test exits 2 (usage error) before running any.
 */
#ifndef HBM_TEST_H
#define HBM_TEST_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hbm_test {
	const char *name;
	void (*fn)(void);
};

extern bool hbm_test_failed;

#define HBM_FAIL(tag, fmt, ...) ({					\
	printf("# %s:FAIL:%d " fmt "\n", tag, __LINE__, ##__VA_ARGS__); \
	hbm_test_failed = true;						\
	false;								\
})

#define ASSERT_TRUE(cond, tag) ({					\
	bool ___ok = (cond);						\
	___ok ? true : HBM_FAIL(tag, "unexpected false: %s", #cond);	\
})

#define ASSERT_FALSE(cond, tag) ASSERT_TRUE(!(cond), tag)

#define ASSERT_OK(err, tag) ({						\
	long long ___e = (err);						\
	___e == 0 ? true : HBM_FAIL(tag, "unexpected error: %lld", ___e); \
})

#define ASSERT_ERR(err, tag) ({						\
	long long ___e = (err);						\
	___e != 0 ? true : HBM_FAIL(tag, "unexpected success");		\
})

#define HBM_ASSERT_CMP(a, b, op, tag) ({				\
	long long ___a = (long long)(a), ___b = (long long)(b);		\
	(___a op ___b) ? true :						\
		HBM_FAIL(tag, "expected %s %s %s: %lld vs %lld",	\
			 #a, #op, #b, ___a, ___b);			\
})

#define ASSERT_EQ(a, b, tag) HBM_ASSERT_CMP(a, b, ==, tag)
#define ASSERT_NEQ(a, b, tag) HBM_ASSERT_CMP(a, b, !=, tag)
#define ASSERT_LT(a, b, tag) HBM_ASSERT_CMP(a, b, <, tag)
#define ASSERT_LE(a, b, tag) HBM_ASSERT_CMP(a, b, <=, tag)
#define ASSERT_GT(a, b, tag) HBM_ASSERT_CMP(a, b, >, tag)
#define ASSERT_GE(a, b, tag) HBM_ASSERT_CMP(a, b, >=, tag)

#define ASSERT_U64_EQ(a, b, tag) ({					\
	uint64_t ___a = (a), ___b = (b);				\
	___a == ___b ? true :						\
		HBM_FAIL(tag, "expected %s == %s: %" PRIu64 " vs %" PRIu64, \
			 #a, #b, ___a, ___b);				\
})

#define ASSERT_STREQ(a, b, tag) ({					\
	const char *___a = (a), *___b = (b);				\
	(___a && ___b && !strcmp(___a, ___b)) ? true :			\
		HBM_FAIL(tag, "expected \"%s\" == \"%s\"",		\
			 ___a ? ___a : "(null)", ___b ? ___b : "(null)"); \
})

static inline int hbm_test_run(const struct hbm_test *tests, int n,
			       int argc, char **argv)
{
	int i, j, planned = 0, num = 0, failed = 0;

	/* A name that matches no test is a usage error, not an empty run. */
	for (j = 1; j < argc; j++) {
		for (i = 0; i < n; i++)
			if (!strcmp(argv[j], tests[i].name))
				break;
		if (i == n) {
			fprintf(stderr, "%s: no test named '%s'\n", argv[0],
				argv[j]);
			return 2;
		}
	}
	for (i = 0; i < n; i++) {
		bool sel = argc <= 1;

		for (j = 1; j < argc; j++)
			sel |= !strcmp(argv[j], tests[i].name);
		planned += sel;
	}
	printf("1..%d\n", planned);
	for (i = 0; i < n; i++) {
		bool sel = argc <= 1;

		for (j = 1; j < argc; j++)
			sel |= !strcmp(argv[j], tests[i].name);
		if (!sel)
			continue;
		hbm_test_failed = false;
		fflush(stdout);
		tests[i].fn();
		printf("%s %d - %s\n", hbm_test_failed ? "not ok" : "ok",
		       ++num, tests[i].name);
		failed += hbm_test_failed;
	}
	return failed ? 1 : 0;
}

#define HBM_TEST(fn) { #fn, fn }

#define HBM_TEST_MAIN(...)						\
bool hbm_test_failed;							\
int main(int argc, char **argv)						\
{									\
	static const struct hbm_test tests[] = { __VA_ARGS__ };		\
	return hbm_test_run(tests, sizeof(tests) / sizeof(tests[0]),	\
			    argc, argv);				\
}

#endif /* HBM_TEST_H */
