#include "expr/evaluate.h"

#include <gtest/gtest.h>

#include "columnar/sql_schema.h"
#include "expr/kernels.h"

namespace sluice::expr {
namespace {

NodePtr Call(Op op, TypePtr type, std::vector<NodePtr> args) {
  auto n = std::make_shared<Node>();
  n->kind = Node::Kind::kCall;
  n->op = op;
  n->type = std::move(type);
  n->args = std::move(args);
  n->where = "line 1, column 8";
  n->text = "expr";
  return n;
}

Batch IntBatch(const std::vector<std::optional<int32_t>>& a,
               const std::vector<std::optional<int32_t>>& b) {
  auto schema = std::make_shared<Schema>(*ParseColumnList("a INT, b INT"));
  Batch batch = Batch::Make(schema);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] ? batch.columns[0].Append<int32_t>(*a[i]) : batch.columns[0].AppendNull();
    b[i] ? batch.columns[1].Append<int32_t>(*b[i]) : batch.columns[1].AppendNull();
  }
  return batch;
}

NodePtr IntLiteral(int32_t v) {
  Column c(DataType::Int());
  c.Append<int32_t>(v);
  return Literal(std::move(c));
}

TEST(EvaluateTest, IntegerAdditionFailsOnlyTheOverflowingRowAndPropagatesNulls) {
  Batch batch = IntBatch({1, 2147483647, std::nullopt, -5}, {2, 1, 3, 5});
  auto add = Call(Op::kAdd, DataType::Int(),
                  {ColumnRef(0, DataType::Int()), ColumnRef(1, DataType::Int())});
  RowErrors errors(batch.num_rows());
  auto out = Evaluate(*add, batch, &errors);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->Value<int32_t>(0), 3);
  EXPECT_TRUE(out->IsNull(1));
  EXPECT_TRUE(out->IsNull(2));
  EXPECT_EQ(out->Value<int32_t>(3), 0);
  EXPECT_EQ(errors.count(), 1);
  EXPECT_TRUE(errors.Failed(1));
  EXPECT_EQ(errors.message(1), "line 1, column 8: integer overflow in expr");
  EXPECT_FALSE(errors.Failed(2));
}

TEST(EvaluateTest, IntegerDivisionTruncatesTowardZeroAndFailsOnZero) {
  Batch batch = IntBatch({7, -7, 7, -2147483648, 5}, {2, 2, 0, -1, -3});
  auto div = Call(Op::kDivide, DataType::Int(),
                  {ColumnRef(0, DataType::Int()), ColumnRef(1, DataType::Int())});
  auto mod = Call(Op::kModulo, DataType::Int(),
                  {ColumnRef(0, DataType::Int()), ColumnRef(1, DataType::Int())});
  RowErrors errors(batch.num_rows());
  auto q = Evaluate(*div, batch, &errors);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->Value<int32_t>(0), 3);
  EXPECT_EQ(q->Value<int32_t>(1), -3);
  EXPECT_TRUE(errors.Failed(2));
  EXPECT_NE(errors.message(2).find("division by zero"), std::string::npos);
  EXPECT_TRUE(errors.Failed(3));  // INT_MIN / -1
  EXPECT_EQ(q->Value<int32_t>(4), -1);
  RowErrors mod_errors(batch.num_rows());
  auto r = Evaluate(*mod, batch, &mod_errors);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->Value<int32_t>(1), -1);  // the sign of the dividend
  EXPECT_EQ(r->Value<int32_t>(3), 0);   // INT_MIN % -1 is 0, not a trap
  EXPECT_EQ(r->Value<int32_t>(4), 2);
}

TEST(EvaluateTest, CaseEvaluatesABranchOnlyForTheRowsThatTakeIt) {
  // CASE WHEN b = 0 THEN NULL ELSE a / b END: no division by zero.
  Batch batch = IntBatch({6, 6, std::nullopt}, {0, 3, 0});
  auto is_zero =
      Call(Op::kEqual, DataType::Boolean(), {ColumnRef(1, DataType::Int()), IntLiteral(0)});
  auto div = Call(Op::kDivide, DataType::Int(),
                  {ColumnRef(0, DataType::Int()), ColumnRef(1, DataType::Int())});
  auto c = Call(Op::kCase, DataType::Int(), {is_zero, NullLiteral(DataType::Int()), div});
  RowErrors errors(batch.num_rows());
  auto out = Evaluate(*c, batch, &errors);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(errors.count(), 0);
  EXPECT_TRUE(out->IsNull(0));
  EXPECT_EQ(out->Value<int32_t>(1), 2);
  EXPECT_TRUE(out->IsNull(2));
}

TEST(EvaluateTest, AndOrFollowThreeValuedLogicAndShortCircuitErrors) {
  // (b <> 0 AND a / b > 1) with b = 0 decided FALSE by the left side.
  Batch batch = IntBatch({6, 6, std::nullopt, 1}, {0, 3, 1, std::nullopt});
  auto nonzero =
      Call(Op::kNotEqual, DataType::Boolean(), {ColumnRef(1, DataType::Int()), IntLiteral(0)});
  auto div = Call(Op::kDivide, DataType::Int(),
                  {ColumnRef(0, DataType::Int()), ColumnRef(1, DataType::Int())});
  auto big = Call(Op::kGreater, DataType::Boolean(), {div, IntLiteral(1)});
  auto both = Call(Op::kAnd, DataType::Boolean(), {nonzero, big});
  RowErrors errors(batch.num_rows());
  auto out = Evaluate(*both, batch, &errors);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(errors.count(), 0);
  EXPECT_FALSE(out->GetBool(0));
  EXPECT_TRUE(out->GetBool(1));
  EXPECT_TRUE(out->IsNull(2));  // TRUE AND NULL
  EXPECT_TRUE(out->IsNull(3));  // NULL AND NULL
  auto either = Call(Op::kOr, DataType::Boolean(), {nonzero, big});
  auto o = Evaluate(*either, batch, &errors);
  ASSERT_TRUE(o.ok());
  EXPECT_TRUE(o->GetBool(1));
  EXPECT_TRUE(o->GetBool(2));    // TRUE OR NULL
  EXPECT_EQ(errors.count(), 1);  // FALSE OR (6 / 0 > 1): the right side runs and fails
  EXPECT_TRUE(errors.Failed(0));
}

TEST(EvaluateTest, LikeMatchesPercentUnderscoreAndEscapes) {
  using internal::LikeMatch;
  EXPECT_TRUE(LikeMatch("abc", "a%", 0));
  EXPECT_TRUE(LikeMatch("abc", "%c", 0));
  EXPECT_TRUE(LikeMatch("abc", "a_c", 0));
  EXPECT_FALSE(LikeMatch("abc", "a_", 0));
  EXPECT_TRUE(LikeMatch("", "%", 0));
  EXPECT_FALSE(LikeMatch("", "_", 0));
  EXPECT_TRUE(LikeMatch("aXbXc", "%X%X%", 0));
  EXPECT_FALSE(LikeMatch("aXb", "%X%X%", 0));
  EXPECT_TRUE(LikeMatch("é!", "_!", 0));  // _ is one code point
  EXPECT_TRUE(LikeMatch("50%", "50!%", '!'));
  EXPECT_FALSE(LikeMatch("500", "50!%", '!'));
  EXPECT_TRUE(LikeMatch("mississippi", "%iss%ppi", 0));
  EXPECT_FALSE(LikeMatch("Abc", "abc", 0));
}

}  // namespace
}  // namespace sluice::expr
